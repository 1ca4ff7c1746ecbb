package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

func init() { subcommands = append(subcommands, newVersionsCmd) }

func newVersionsCmd() *cobra.Command {
	var dataDir string
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "versions",
		Short: "List trained policy versions; promote or roll back to any of them",
		Long: `List the policy versions the learning loop trained, newest first: when,
on how many samples, the loss and mean reward, samples refused as stale,
the retention check and whether the version was promoted (served) or
rejected, and why.

clawrl versions promote N and clawrl versions rollback N serve version N
again: the request is recorded in the store, and the train loop of the
running server (or the next clawrl serve) carries it out by recording a
copy of N as a new version and publishing it to the engine. Reading is safe
while clawrl serve runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openStoreReadOnly(cmd.Context(), dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			vs, err := st.Versions(cmd.Context(), limit)
			if err != nil {
				return err
			}
			served, err := st.ServedVersion(cmd.Context())
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if asJSON {
				return writeVersionsJSON(cmd.OutOrStdout(), vs, served.Version)
			}
			return writeVersions(cmd.OutOrStdout(), vs, served.Version)
		},
	}
	addDataFlag(cmd, &dataDir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many versions (0: all)")
	cmd.AddCommand(newServeVersionCmd("promote", "Serve version N (e.g. one the retention check rejected)"),
		newServeVersionCmd("rollback", "Go back to serving version N"))
	return cmd
}

func newServeVersionCmd(action, short string) *cobra.Command {
	var dataDir string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   action + " N",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("version %q: want a positive number (see clawrl versions)", args[0])
			}
			st, err := sqlite.OpenDir(cmd.Context(), dataDir, sqlite.Options{})
			if err != nil {
				return fmt.Errorf("no clawrl store in %s (pass --data): %w", dataDir, err)
			}
			defer st.Close()
			req, err := st.RequestServing(cmd.Context(), n, action)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("there is no version %d (see clawrl versions)", n)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if wait <= 0 {
				fmt.Fprintf(out, "requested: %s to v%d (request %d); the running server, or the next clawrl serve, serves it as a new version\n", action, n, req.ID)
				return nil
			}
			return waitServing(cmd.Context(), st, out, req, wait)
		},
	}
	addDataFlag(cmd, &dataDir)
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait this long for the running server to serve it, and say how it went")
	return cmd
}

// waitServing polls until the train loop has carried out req.
func waitServing(ctx context.Context, st *sqlite.Store, out io.Writer, req store.ServingRequest, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		p, err := st.PendingServing(ctx)
		if errors.Is(err, store.ErrNotFound) || (err == nil && p.ID > req.ID) {
			served, err := st.ServedVersion(ctx)
			if err != nil {
				return err
			}
			if served.SourceVersion == req.Version {
				fmt.Fprintf(out, "serving v%d, a copy of v%d\n", served.Version, req.Version)
				return nil
			}
			return fmt.Errorf("the %s to v%d was not carried out (serving v%d; see the server's log)", req.Action, req.Version, served.Version)
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("request %d still pending after %s: is clawrl serve running on this data directory?", req.ID, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type versionRow struct {
	Version       int64                `json:"version"`
	CreatedAt     time.Time            `json:"created_at"`
	Status        string               `json:"status"`
	Served        bool                 `json:"served"`
	Reason        string               `json:"reason,omitempty"`
	SourceVersion int64                `json:"source_version,omitempty"`
	Method        string               `json:"method"`
	Dir           string               `json:"dir"`
	Metrics       store.VersionMetrics `json:"metrics"`
}

func writeVersionsJSON(w io.Writer, vs []store.Version, served int64) error {
	rows := make([]versionRow, len(vs))
	for i, v := range vs {
		rows[i] = versionRow{Version: v.Version, CreatedAt: v.CreatedAt, Status: statusOf(v), Served: v.Version == served,
			Reason: v.StatusReason, SourceVersion: v.SourceVersion, Method: v.Method, Dir: v.Dir, Metrics: v.Metrics}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func statusOf(v store.Version) string {
	if v.Status == "" {
		return store.VersionPromoted
	}
	return v.Status
}

func writeVersions(w io.Writer, vs []store.Version, served int64) error {
	if len(vs) == 0 {
		_, err := fmt.Fprintln(w, "no versions yet: the base weights are served")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tCREATED\tSAMPLES\tLOSS\tMEAN REWARD\tSTALE DROPPED\tRETENTION\tRESULT\tWHY")
	for _, v := range vs {
		m := v.Metrics
		name := fmt.Sprintf("v%d", v.Version)
		if v.Version == served {
			name += " *"
		}
		retention := "-"
		if m.RetentionFacts > 0 {
			retention = fmt.Sprintf("%d/%d kept", m.RetentionFacts-m.RetentionLost, m.RetentionFacts)
			if m.RetentionBase != 0 { // the log-probability check (the behavioural one scores none)
				retention += fmt.Sprintf(", %.2f (base %.2f)", m.RetentionLogprob, m.RetentionBase)
			}
			if m.Repairs > 0 { // the gate repaired the step on the rehearsal anchors
				retention += fmt.Sprintf(", repaired ×%d", m.Repairs)
			}
			if m.StepScale > 0 && m.StepScale < 1 { // the gate backtracked, or a thinned step
				retention += fmt.Sprintf(", step ×%g", m.StepScale)
			}
		}
		samples := strconv.Itoa(m.Samples)
		if v.SourceVersion > 0 {
			samples = fmt.Sprintf("(copy of v%d)", v.SourceVersion)
		}
		reward := fmt.Sprintf("%+.2f", m.MeanReward)
		if m.RatingWeight > 0 { // --baseline running: what the step's rewards were centred on
			reward += fmt.Sprintf(" (baseline %+.2f)", m.RewardBaseline)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%s\t%d\t%s\t%s\t%s\n", name, v.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			samples, m.Loss, reward, m.DroppedStale, retention, statusOf(v), v.StatusReason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "* served")
	return err
}
