// Package dashboard tests clawrl's dashboard and browser chat (package ui) the
// way a person uses them: in headless Chromium (Debian's chromium package,
// driven by chromedp) against a real `clawrl serve`. It signs in, chats with
// a streamed answer, rates it and writes feedback, finds the turn in the
// sessions view, checks that model-written markup stays text, and watches a
// trained version appear on the learning page. Screenshots of every page
// land in testdata/tmp/dashboard at the repository root (the path is logged).
//
// Without a chromium binary (CLAWRL_CHROMIUM, chromium or chromium-browser
// on PATH) the test skips, and fails under CLAWRL_REQUIRE_REFS=1.
package dashboard
