package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/sqlite"
)

func init() { subcommands = append(subcommands, newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var dataDir, storeURL, addr, apiKey string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the loops are doing: sessions, turns by state, queues, policy version",
		Long: `Show a summary of the store: sessions, turns by state and type, the
learning loop's queues (observed turns waiting for the judge, ready samples
waiting for the trainer), the newest policy version, and whatever the
learning loop reports (adapter versions, last losses).

It reads the store read-only, so it is safe while clawrl serve runs. With
--addr it asks a running server instead (its GET /metrics).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep statusReport
			if addr != "" {
				var err error
				if rep, err = fetchRemoteStatus(cmd.Context(), addr, apiKey); err != nil {
					return err
				}
			} else {
				st, err := openReadStore(cmd.Context(), storeURL, dataDir)
				if err != nil {
					return err
				}
				defer st.Close()
				if rep, err = collectStatus(cmd.Context(), st); err != nil {
					return err
				}
				if err := addStatusSections(&rep, dataDir); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return writeStatus(cmd.OutOrStdout(), rep)
		},
	}
	addReadStoreFlags(cmd, &dataDir, &storeURL)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().StringVar(&addr, "addr", "", "ask the server at this address (host:port) instead of reading --data")
	cmd.Flags().StringVar(&apiKey, "api-key", os.Getenv("CLAWRL_API_KEY"), "Bearer key for --addr, if the server requires one (env CLAWRL_API_KEY)")
	return cmd
}

// statusReport is what `clawrl status --json` prints.
type statusReport struct {
	Server          string                  `json:"server,omitempty"` // with --addr: the server asked
	Database        string                  `json:"database,omitempty"`
	DatabaseBytes   int64                   `json:"database_bytes,omitempty"`
	WALBytes        int64                   `json:"wal_bytes,omitempty"`
	SchemaVersion   int                     `json:"schema_version,omitempty"`
	Sessions        int                     `json:"sessions"`
	ExpiredSessions int                     `json:"expired_sessions"`
	Turns           int                     `json:"turns"`
	TurnsByState    map[store.TurnState]int `json:"turns_by_state"`
	TurnsByType     map[store.TurnType]int  `json:"turns_by_type"`
	AwaitingJudge   int                     `json:"awaiting_judge"`
	AwaitingTrainer int                     `json:"awaiting_trainer"`
	PolicyVersion   int64                   `json:"policy_version"`
	// Loop is what a store.Reporter adds (the learning loop's versions,
	// trainer steps, last losses); absent until the loop records any.
	Loop map[string]any `json:"loop,omitempty"`
	// Sections are what other parts of clawrl add (statusSections).
	Sections     map[string]any    `json:"sections,omitempty"`
	sectionTexts map[string]string // their table lines
}

// statusSections add named sections to `clawrl status` from the data
// folder (agent training's progress, say); registered by init functions.
var statusSections []func(dataDir string) (name string, v any, text string, err error)

func addStatusSections(rep *statusReport, dataDir string) error {
	for _, sec := range statusSections {
		name, v, text, err := sec(dataDir)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if rep.Sections == nil {
			rep.Sections, rep.sectionTexts = map[string]any{}, map[string]string{}
		}
		rep.Sections[name], rep.sectionTexts[name] = v, text
	}
	return nil
}

func collectStatus(ctx context.Context, st readStore) (statusReport, error) {
	stats, err := st.Stats(ctx)
	if err != nil {
		return statusReport{}, err
	}
	version, err := st.SchemaVersion(ctx)
	if err != nil {
		return statusReport{}, err
	}
	rep := statusReport{
		SchemaVersion:   version,
		Sessions:        stats.Sessions,
		ExpiredSessions: stats.ExpiredSessions,
		Turns:           stats.Turns,
		TurnsByState:    stats.TurnsByState,
		TurnsByType:     stats.TurnsByType,
		AwaitingJudge:   stats.AwaitingJudge,
		AwaitingTrainer: stats.AwaitingTrainer,
		PolicyVersion:   stats.PolicyVersion,
	}
	switch st := st.(type) {
	case *sqlite.Store:
		rep.Database, rep.DatabaseBytes, rep.WALBytes = st.Path(), fileSize(st.Path()), fileSize(st.Path()+"-wal")
	case *postgres.Store:
		rep.Database = st.Name()
	}
	// The learning loop's tables arrive in later migrations; a store that
	// knows them reports through store.Reporter.
	if r, ok := any(st).(store.Reporter); ok {
		if rep.Loop, err = r.Report(ctx); err != nil {
			return statusReport{}, fmt.Errorf("status: learning loop: %w", err)
		}
	}
	return rep, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func writeStatus(w io.Writer, rep statusReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if rep.Server != "" {
		fmt.Fprintf(tw, "server\t%s\n", rep.Server)
	} else if rep.DatabaseBytes == 0 && rep.WALBytes == 0 {
		fmt.Fprintf(tw, "database\t%s (schema %d)\n", rep.Database, rep.SchemaVersion)
	} else {
		fmt.Fprintf(tw, "database\t%s (%s, WAL %s, schema %d)\n", rep.Database, humanBytes(rep.DatabaseBytes), humanBytes(rep.WALBytes), rep.SchemaVersion)
	}
	fmt.Fprintf(tw, "sessions\t%d (%d expired)\n", rep.Sessions, rep.ExpiredSessions)
	fmt.Fprintf(tw, "turns\t%d (main %d, side %d)\n", rep.Turns, rep.TurnsByType[store.Main], rep.TurnsByType[store.Side])
	fmt.Fprintf(tw, "policy version\t%d\n", rep.PolicyVersion)
	fmt.Fprintf(tw, "waiting for judge\t%d\n", rep.AwaitingJudge)
	fmt.Fprintf(tw, "waiting for trainer\t%d\n", rep.AwaitingTrainer)
	fmt.Fprintln(tw, "\nstate\tturns")
	for _, s := range store.TurnStates() {
		fmt.Fprintf(tw, "%s\t%d\n", s, rep.TurnsByState[s])
	}
	if len(rep.Loop) > 0 {
		fmt.Fprintln(tw, "\nlearning loop\t")
		keys := make([]string, 0, len(rep.Loop))
		for k := range rep.Loop {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, err := json.Marshal(rep.Loop[k])
			if err != nil {
				v = fmt.Appendf(nil, "%v", rep.Loop[k])
			}
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rep.sectionTexts)) {
		fmt.Fprintf(tw, "\n%s\t\n%s\n", name, rep.sectionTexts[name])
	}
	return tw.Flush()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
