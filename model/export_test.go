package model

// RelRMS and Argmax are relRMS and argmax for the external test package
// (accuracy_test.go).
var (
	RelRMS = relRMS
	Argmax = argmax
)
