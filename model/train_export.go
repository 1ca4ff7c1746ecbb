package model

// Accessors the trainer (package train) needs and the inference side does
// not export. Owned by the trainer engineer; kept in its own file so the
// inference files stay untouched.

// RopeInvFreq returns the rotary inverse frequencies with the configured
// scaling applied, exactly as the forward pass uses them.
func (c *Config) RopeInvFreq() []float64 { return c.invFreq() }
