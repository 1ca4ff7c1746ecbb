package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
)

// listener is a store that wakes other processes (store/postgres: LISTEN/NOTIFY).
type listener interface {
	Listen(ctx context.Context, channel string) <-chan string
}

// follower publishes to a gateway's engine every version another process
// (`clawrl trainer`) commits to the store: it polls the versions table and,
// on Postgres, wakes at once on the commit's notification.
type follower struct {
	store store.LearningStore
	pub   engine.Publisher
	poll  time.Duration
	log   *slog.Logger
	wg    sync.WaitGroup
}

// startFollowing publishes the latest version now, then follows until ctx
// ends; Wait waits for it.
func startFollowing(ctx context.Context, st store.LearningStore, eng engine.Engine, poll time.Duration, log *slog.Logger) (*follower, error) {
	pub, ok := eng.(engine.Publisher)
	f := &follower{store: st, pub: pub, poll: poll, log: log.With("part", "follow")}
	if !ok {
		f.log.Warn("the engine takes no adapter versions: serving base weights only")
		return f, nil
	}
	if err := f.sync(ctx); err != nil {
		return nil, err
	}
	var wake <-chan string
	if l, ok := st.(listener); ok {
		wake = l.Listen(ctx, postgres.ChannelVersions)
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case _, ok := <-wake:
				if !ok {
					wake = nil
				}
			}
			if err := f.sync(ctx); err != nil && ctx.Err() == nil {
				f.log.Error("following versions", "err", err)
			}
		}
	}()
	return f, nil
}

// sync publishes the newest promoted version (a version the retention check
// rejected is never served) if the engine serves an older one.
func (f *follower) sync(ctx context.Context) error {
	v, err := f.store.ServedVersion(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if v.Version <= f.pub.Version() {
		return nil
	}
	start := time.Now()
	if err := f.pub.Publish(ctx, v.Version, v.Dir); err != nil {
		return err
	}
	f.log.Info("serving new version", "version", v.Version, "dir", v.Dir,
		"since_commit", time.Since(v.CreatedAt).Round(time.Millisecond), "load", time.Since(start).Round(time.Millisecond))
	return nil
}

// Wait waits for the follower to stop.
func (f *follower) Wait() { f.wg.Wait() }
