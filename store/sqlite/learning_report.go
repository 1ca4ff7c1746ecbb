package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawrl/clawrl/store"
)

// What `clawrl export` and `clawrl status` show of the learning loop
// (store.Annotator and store.Reporter).

var (
	_ store.Annotator = (*Store)(nil)
	_ store.Reporter  = (*Store)(nil)
)

// AnnotateTurns implements store.Annotator: for every judged turn the seed's
// PRM record fields (score, votes, representative_eval) and OPD fields
// (accepted, hint, hint_len, teacher_logprob_len), plus the whole judgment
// and sample as objects.
func (s *Store) AnnotateTurns(ctx context.Context, turnIDs []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	if len(turnIDs) == 0 {
		return out, nil
	}
	in := "(?" + strings.Repeat(", ?", len(turnIDs)-1) + ")"
	args := make([]any, len(turnIDs))
	for i, id := range turnIDs {
		args[i] = id
	}
	judgments, err := queryAll(ctx, s.reader, "annotate judgments",
		`SELECT `+judgmentColumns+` FROM judgments j WHERE j.turn_id IN `+in, args, scanJudgment)
	if err != nil {
		return nil, err
	}
	for _, j := range judgments {
		out[j.TurnID] = judgmentFields(j)
	}
	samples, err := queryAll(ctx, s.reader, "annotate samples",
		`SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id IN `+in, args, scanSample)
	if err != nil {
		return nil, err
	}
	for _, smp := range samples {
		m := out[smp.TurnID]
		if m == nil {
			m = map[string]any{}
			out[smp.TurnID] = m
		}
		m["teacher_logprob_len"] = len(smp.TeacherLogprobs)
		m["sample"] = map[string]any{
			"method": smp.Method, "use_rl": smp.UseRL, "reward": smp.Reward, "opd": smp.TeacherLogprobs != nil,
			"teacher_logprob_len": len(smp.TeacherLogprobs), "teacher_adapter": smp.TeacherAdapter,
			"teacher_version": smp.TeacherVersion, "policy_version": smp.PolicyVersion, "why": smp.Why,
			"created_at": timestamp(smp.CreatedAt), "trained_version": smp.TrainedVersion,
		}
	}
	return out, nil
}

func judgmentFields(j store.Judgment) map[string]any {
	// The seed's votes are the parsed eval scores, null for a vote without
	// a valid \boxed{}; its representative_eval is the text of a vote that
	// agrees with the final score.
	var votes []any
	representative := ""
	for _, v := range j.Votes {
		if v.Kind != store.VoteEval {
			continue
		}
		if v.Valid {
			votes = append(votes, v.Score)
		} else {
			votes = append(votes, nil)
		}
		if representative == "" && v.Valid && v.Score == j.Score {
			representative = v.Raw
		}
	}
	if representative == "" {
		for _, v := range j.Votes {
			if v.Raw != "" {
				representative = v.Raw
				break
			}
		}
	}
	if votes == nil {
		votes = []any{}
	}
	return map[string]any{
		"score": j.Score, "votes": votes, "representative_eval": representative,
		"accepted": j.HintAccepted, "hint": j.Hint, "hint_len": len(j.Hint),
		"judgment": map[string]any{
			"score": j.Score, "votes": j.Votes, "hint": j.Hint, "accepted": j.HintAccepted, "judge": j.Judge,
			"reason": j.Reason, "keep": j.Keep, "why": j.Why, "created_at": timestamp(j.CreatedAt),
		},
	}
}

// recentVersions is how many versions status lists.
const recentVersions = 5

// Report implements store.Reporter.
func (s *Store) Report(ctx context.Context) (map[string]any, error) {
	st, err := s.LearningStats(ctx)
	if err != nil {
		return nil, err
	}
	rep := map[string]any{
		"judgments": st.Judgments, "hints_accepted": st.HintsAccepted, "samples_ready": st.SamplesReady,
		"samples_total": st.SamplesTotal, "samples_trained": st.Trained, "versions": st.Versions,
	}
	if len(st.DroppedBy) > 0 {
		rep["dropped_by"] = st.DroppedBy
	}
	if st.Latest != nil {
		rep["latest_version"] = st.Latest.Version
		rep["latest_version_dir"] = st.Latest.Dir
		rep["latest_version_at"] = timestamp(st.Latest.CreatedAt)
		rep["latest_metrics"] = st.Latest.Metrics
	}
	versions, err := s.Versions(ctx, recentVersions)
	if err != nil {
		return nil, err
	}
	var recent []string
	for _, v := range versions {
		recent = append(recent, fmt.Sprintf("v%d loss %.4g reward %+.2f (%d samples, %d stale)",
			v.Version, v.Metrics.Loss, v.Metrics.MeanReward, v.Metrics.Samples, v.Metrics.DroppedStale))
	}
	if len(recent) > 0 {
		rep["recent_versions"] = recent
	}
	return rep, nil
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
