//go:build !amd64 || purego

package quant

func spinPause() {}
