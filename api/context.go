package api

import (
	"context"
	"strconv"
)

func contextWithInfo(ctx context.Context, info *requestInfo) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// infoFrom returns the request's log record (a throwaway one outside the
// middleware, e.g. in direct handler tests).
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

func itoa(n int) string { return strconv.Itoa(n) }
