//go:build !unix

package mmap

import "os"

// File reads the whole file where mmap is not available.
func File(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
