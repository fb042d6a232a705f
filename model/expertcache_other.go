//go:build !linux

package model

import "errors"

// openDirect: no O_DIRECT reads here; the model runs from the mapping.
func openDirect([]string) (blockReader, error) {
	return nil, errors.New("expert cache: no O_DIRECT on this OS")
}
