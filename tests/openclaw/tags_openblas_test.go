//go:build openblas

package openclaw

// clawrlBuildTags builds the clawrl under test the way this test was built.
const clawrlBuildTags = "openblas"
