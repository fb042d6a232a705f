package mapfile

// adviseHuge does nothing: macOS has no transparent huge pages to ask for.
func adviseHuge([]byte) {}
