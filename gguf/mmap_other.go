//go:build !unix

package gguf

import "os"

// mapFile reads the whole file where mmap is not available.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
