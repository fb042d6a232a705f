//go:build race

package pool

const raceOn = true
