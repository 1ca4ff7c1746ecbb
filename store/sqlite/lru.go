package sqlite

import (
	"container/list"
	"sync"
)

// lru is a mutex-guarded least-recently-used cache bounded by the summed
// size of its values. A nil *lru is a disabled cache.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	used  int
	order *list.List // front = most recent; values are *lruEntry
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key  K
	val  V
	size int
}

func newLRU[K comparable, V any](maxBytes int) *lru[K, V] {
	if maxBytes <= 0 {
		return nil
	}
	return &lru[K, V]{max: maxBytes, order: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

// put adds k; a value over a quarter of the bound is not kept, so one giant
// entry cannot flush everything else.
func (c *lru[K, V]) put(k K, v V, size int) {
	if c == nil || size > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v, size: size})
	c.used += size
	for c.used > c.max {
		last := c.order.Back()
		ent := last.Value.(*lruEntry[K, V])
		c.order.Remove(last)
		delete(c.items, ent.key)
		c.used -= ent.size
	}
}

func (c *lru[K, V]) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
