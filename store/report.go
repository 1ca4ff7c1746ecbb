package store

import (
	"context"
	"fmt"
	"time"
)

// What `clawrl export` and `clawrl status` show of the learning loop,
// computed from the domain types so every backend (store/sqlite,
// store/postgres) reports the same fields: a backend fetches the rows and
// these functions shape them.

// Annotations builds store.Annotator's answer from the judgments and
// samples of some turns: for every judged turn the seed's PRM record fields
// (score, votes, representative_eval) and OPD fields (accepted, hint,
// hint_len, teacher_logprob_len), plus the whole judgment and sample as
// objects.
func Annotations(judgments []Judgment, samples []Sample) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, j := range judgments {
		out[j.TurnID] = judgmentFields(j)
	}
	for _, smp := range samples {
		m := out[smp.TurnID]
		if m == nil {
			m = map[string]any{}
			out[smp.TurnID] = m
		}
		m["teacher_logprob_len"] = len(smp.TeacherLogprobs)
		sm := map[string]any{
			"method": smp.Method, "use_rl": smp.UseRL, "reward": smp.Reward, "opd": smp.TeacherLogprobs != nil,
			"teacher_logprob_len": len(smp.TeacherLogprobs), "teacher_adapter": smp.TeacherAdapter,
			"teacher_version": smp.TeacherVersion, "policy_version": smp.PolicyVersion, "why": smp.Why,
			"created_at": timestamp(smp.CreatedAt), "trained_version": smp.TrainedVersion,
			"teacher_wrote": smp.TeacherResponseIDs != nil,
		}
		if smp.TeacherResponseIDs != nil {
			// What the sample trains on instead of (or, with --opd-response
			// both, beside) the turn's response: the teacher's answer.
			sm["teacher_response_ids"] = smp.TeacherResponseIDs
		}
		m["sample"] = sm
	}
	return out
}

func judgmentFields(j Judgment) map[string]any {
	// The seed's votes are the parsed eval scores, null for a vote without
	// a valid \boxed{}; its representative_eval is the text of a vote that
	// agrees with the final score.
	var votes []any
	representative := ""
	for _, v := range j.Votes {
		if v.Kind != VoteEval {
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

// RecentVersions is how many versions LearningReport lists.
const RecentVersions = 5

// LearningReport builds store.Reporter's answer (the learning loop's counts,
// the newest version and its metrics, the recent versions) from a store's
// learning statistics and version list.
func LearningReport(ctx context.Context, src interface {
	LearningStats(ctx context.Context) (LearningStats, error)
	Versions(ctx context.Context, limit int) ([]Version, error)
}) (map[string]any, error) {
	st, err := src.LearningStats(ctx)
	if err != nil {
		return nil, err
	}
	rep := map[string]any{
		"judgments": st.Judgments, "hints_accepted": st.HintsAccepted, "samples_ready": st.SamplesReady, "samples_pending": st.SamplesPending,
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
	versions, err := src.Versions(ctx, RecentVersions)
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
