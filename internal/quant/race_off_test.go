//go:build !race

package quant

const raceOn = false
