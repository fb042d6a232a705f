package model

// RelRMS is relRMS for the external test package (accuracy_test.go).
var RelRMS = relRMS
