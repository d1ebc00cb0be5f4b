//go:build js && wasm && !charts

package main

import (
	"context"
	"errors"
	"syscall/js"
	"time"

	"github.com/ratelab/ratelab/web"
)

const readyEvent = "ratelab-ready"

// session is the page's one workbench session (nil before open).
var session *web.Session

var errNoSession = errors.New("no scenario is open")

// withSession answers f's view of the session, or that none is open.
func withSession(f func(s *web.Session) error) any {
	if session == nil {
		return answer(nil, errNoSession)
	}
	if err := f(session); err != nil {
		return answer(nil, err)
	}
	return answer(session.View(), nil)
}

func register() {
	api := map[string]any{
		"builtins":    fn(func([]js.Value) any { return answer(web.Builtins(), nil) }),
		"builtinYAML": fn(func(a []js.Value) any { return answer(web.BuiltinYAML(str(a, 0))) }),
		"defaultYAML": fn(func([]js.Value) any { return answer(web.DefaultYAML()) }),
		// runJSON: ok is `ratelab run --format json`'s text for the scenario text.
		"runJSON": fn(func(a []js.Value) any { return answer(web.RunJSON(context.Background(), str(a, 0))) }),
		"check": fn(func(a []js.Value) any {
			_, err := web.Load(str(a, 0))
			return answer(true, err)
		}),
		"checkSpec": fn(func(a []js.Value) any { return answer(true, web.CheckSpec(str(a, 0))) }),
		"addLane":   fn(func(a []js.Value) any { return answer(web.AddLane(str(a, 0), str(a, 1))) }),
		// open starts the scenario text at t=0, or at the moment (steps, now_ns) when given.
		"open": fn(func(a []js.Value) any {
			s, err := web.NewSession(str(a, 0))
			if err != nil {
				return answer(nil, err)
			}
			if len(a) > 2 {
				if err := s.GoTo(web.Moment{Steps: uint64(num(a, 1)), Now: time.Duration(num(a, 2))}); err != nil {
					s.Close()
					return answer(nil, err)
				}
			}
			if session != nil {
				session.Close()
			}
			session = s
			return answer(s.View(), nil)
		}),
		"view": fn(func([]js.Value) any { return withSession(func(*web.Session) error { return nil }) }),
		"step": fn(func([]js.Value) any { return withSession((*web.Session).Step) }),
		"back": fn(func([]js.Value) any { return withSession((*web.Session).Back) }),
		"seek": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { return s.Seek(time.Duration(num(a, 0))) })
		}),
		"burst": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { return s.Burst(int(num(a, 0))) })
		}),
		// advance moves on by the virtual ns given (play), to the horizon at most; in predict
		// mode it stops at a question or an answer (Session.Advance).
		"advance": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { return s.Advance(time.Duration(num(a, 0))) })
		}),
		// predict turns predict mode on (true) or off.
		"predict": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { s.SetPredict(len(a) > 0 && a[0].Truthy()); return nil })
		}),
		// guess answers predict mode's question: one count per lane ("3 5 0").
		"guess": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { return s.Guess(str(a, 0)) })
		}),
		"dismiss": fn(func([]js.Value) any {
			return withSession(func(s *web.Session) error { s.Dismiss(); return nil })
		}),
		// exact shows the log's durations exact (true) or rounded as the TUI does.
		"exact": fn(func(a []js.Value) any {
			return withSession(func(s *web.Session) error { s.SetExact(len(a) > 0 && a[0].Truthy()); return nil })
		}),
		// rate multiplies the active flat source's rate by the factor given from now on:
		// {note: "source 1: poisson 125/s from t=2s (was 100/s)", view}.
		"rate": fn(func(a []js.Value) any {
			if session == nil {
				return answer(nil, errNoSession)
			}
			c, err := session.ChangeRate(num(a, 0))
			if err != nil {
				return answer(nil, err)
			}
			return answer(map[string]any{"note": c.String(), "view": session.View()}, nil)
		}),
		"yaml": fn(func([]js.Value) any {
			if session == nil {
				return answer(nil, errNoSession)
			}
			return answer(session.YAML())
		}),
		// link is the permalink text of the session: its scenario and moment.
		"link": fn(func([]js.Value) any {
			if session == nil {
				return answer(nil, errNoSession)
			}
			text, err := session.YAML()
			if err != nil {
				return answer(nil, err)
			}
			return answer(web.EncodeLink(text, session.Moment()))
		}),
		// decodeLink reads a permalink's text: {yaml, steps, now_ns}.
		"decodeLink": fn(func(a []js.Value) any {
			text, m, err := web.DecodeLink(str(a, 0))
			return answer(map[string]any{"yaml": text, "steps": m.Steps, "now_ns": m.Now}, err)
		}),
	}
	js.Global().Set("ratelab", js.ValueOf(api))
}
