//go:build race

package quant

const raceOn = true
