package sqlite

import (
	"reflect"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

// TestCloneCoversChatTypes fails when a chat type gains a field that holds a
// reference (slice, map, pointer): cloneMessage/cloneTools must then copy
// it, or a caller editing a returned turn would edit the payload cache.
func TestCloneCoversChatTypes(t *testing.T) {
	known := map[string]bool{
		"Message.ToolCalls":      true, // slices.Clone in cloneMessage (elements hold only strings)
		"FunctionDef.Parameters": true, // bytes.Clone in cloneTools
		"FunctionDef.Strict":     true, // copied in cloneTools
	}
	var walk func(rt reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(rt reflect.Type) {
		if seen[rt] {
			return
		}
		seen[rt] = true
		for i := range rt.NumField() {
			f := rt.Field(i)
			name := rt.Name() + "." + f.Name
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Array:
				if !known[name] {
					t.Errorf("%s (%s) is a reference the payload clones do not copy", name, f.Type)
				}
				if el := f.Type.Elem(); el.Kind() == reflect.Struct {
					walk(el)
				}
			case reflect.Struct:
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[chat.Message]())
	walk(reflect.TypeFor[chat.Tool]())
}

func TestPayloadCacheEvicts(t *testing.T) {
	c := newPayloadCache(1000)
	for seq := range int64(20) {
		c.put(seq, &payload{size: 100}, 100)
	}
	if c.used > 1000 || c.len() != 10 {
		t.Errorf("cache holds %d bytes in %d entries, want ≤1000 in 10", c.used, c.len())
	}
	if _, ok := c.get(0); ok {
		t.Error("oldest entry survived")
	}
	if _, ok := c.get(19); !ok {
		t.Error("newest entry evicted")
	}
	// Reading an entry keeps it: 10 is the oldest now, touch it, add one.
	c.get(10)
	c.put(20, &payload{size: 100}, 100)
	if _, ok := c.get(10); !ok {
		t.Error("recently read entry evicted")
	}
	if _, ok := c.get(11); ok {
		t.Error("least recently used entry kept")
	}
	c.put(99, &payload{size: 600}, 600) // over a quarter of the cache: not kept
	if _, ok := c.get(99); ok {
		t.Error("oversized payload cached")
	}
	var off *payloadCache
	off.put(1, &payload{size: 1}, 1)
	if _, ok := off.get(1); ok {
		t.Error("nil cache returned a payload")
	}
}
