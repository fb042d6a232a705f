//go:build purego

package all_test

const purego = true
