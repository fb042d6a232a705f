//go:build race

package all_test

const raceOn = true
