package env

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Balance is an Env over several Envs (this process's pool, servers on
// other machines): each Create goes to the one with the most free slots,
// and the episode id it returns names that Env, so later calls find it.
type Balance struct {
	envs []Env
	mu   sync.Mutex
	next int
}

// NewBalance spreads episodes over envs.
func NewBalance(envs ...Env) (*Balance, error) {
	if len(envs) == 0 {
		return nil, errors.New("env balance: no environments")
	}
	return &Balance{envs: envs}, nil
}

// Envs are the balanced environments.
func (b *Balance) Envs() []Env { return b.envs }

// Create implements Env. An Env whose Load fails is skipped while another
// answers; ties go round-robin.
func (b *Balance) Create(ctx context.Context, task Task) (Created, error) {
	b.mu.Lock()
	start := b.next
	b.next = (b.next + 1) % len(b.envs)
	b.mu.Unlock()
	best, bestFree := -1, 0
	var errs []error
	for k := range b.envs {
		i := (start + k) % len(b.envs)
		l, err := b.envs[i].Load(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if best < 0 || l.Free() > bestFree {
			best, bestFree = i, l.Free()
		}
	}
	if best < 0 {
		return Created{}, fmt.Errorf("env balance: no environment answers: %w", errors.Join(errs...))
	}
	c, err := b.envs[best].Create(ctx, task)
	if err != nil {
		return Created{}, err
	}
	c.EpisodeID = strconv.Itoa(best) + "." + c.EpisodeID
	return c, nil
}

func (b *Balance) route(id string) (Env, string, error) {
	i, rest, ok := strings.Cut(id, ".")
	n, err := strconv.Atoi(i)
	if !ok || err != nil || n < 0 || n >= len(b.envs) {
		return nil, "", fmt.Errorf("episode %q: %w", id, ErrNotFound)
	}
	return b.envs[n], rest, nil
}

// Step implements Env.
func (b *Balance) Step(ctx context.Context, id string, a Action) (Observation, error) {
	e, inner, err := b.route(id)
	if err != nil {
		return Observation{}, err
	}
	return e.Step(ctx, inner, a)
}

// Evaluate implements Env.
func (b *Balance) Evaluate(ctx context.Context, id string) (Evaluation, error) {
	e, inner, err := b.route(id)
	if err != nil {
		return Evaluation{}, err
	}
	return e.Evaluate(ctx, inner)
}

// Heartbeat implements Env.
func (b *Balance) Heartbeat(ctx context.Context, id string) error {
	e, inner, err := b.route(id)
	if err != nil {
		return err
	}
	return e.Heartbeat(ctx, inner)
}

// Close implements Env.
func (b *Balance) Close(ctx context.Context, id string) error {
	e, inner, err := b.route(id)
	if err != nil {
		return err
	}
	return e.Close(ctx, inner)
}

// Load implements Env: the sum over the Envs that answer.
func (b *Balance) Load(ctx context.Context) (Load, error) {
	var sum Load
	var errs []error
	seen := map[string]bool{}
	for _, e := range b.envs {
		l, err := e.Load(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sum.Running += l.Running
		sum.Waiting += l.Waiting
		sum.Limit += l.Limit
		sum.Created += l.Created
		sum.Closed += l.Closed
		sum.Reaped += l.Reaped
		sum.Failed += l.Failed
		for _, k := range l.Kinds {
			if !seen[k] {
				seen[k] = true
				sum.Kinds = append(sum.Kinds, k)
			}
		}
	}
	if len(errs) == len(b.envs) {
		return Load{}, errors.Join(errs...)
	}
	return sum, nil
}
