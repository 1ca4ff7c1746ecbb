module github.com/clawrl/clawrl

go 1.26.0

require (
	github.com/dlclark/regexp2 v1.12.0
	github.com/spf13/cobra v1.10.2
	golang.org/x/text v0.43.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
