package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// seek moves m to t as the user would: g, the time, enter.
func seek(m *Model, t string) {
	press(m, "g")
	for _, r := range t {
		press(m, string(r))
	}
	press(m, "enter")
}

// checkFleetNumbers fails unless every fleet lane's instance counts on screen are the
// engine's: each instance's admitted and refused (offered − admitted) in the row or the
// shared line that the layout gives it (the shared line may count the last instances
// instead), "down" beside each instance that is not live, and the total their sum, which is
// the lane's.
func checkFleetNumbers(t *testing.T, m *Model, view string, full bool) {
	t.Helper()
	for i, lane := range m.sim.lanes {
		res := lane.Result()
		f := res.Fleet
		if f == nil {
			continue
		}
		live := lane.InstancesLive()
		var sum int64
		var compact []string
		for k, in := range f.Instances {
			sum += in.Admitted
			down := ""
			if !live[k] {
				down = " down"
			}
			if full {
				row := regexp.MustCompile(fmt.Sprintf(`#%d \[[█░]+\] ok +%d · no +%d%s(?: · cut off)?(?:\n|$)`,
					k, in.Admitted, in.Offered-in.Admitted, strings.ReplaceAll(down, " ", " · ")))
				if !row.MatchString(view) {
					t.Errorf("lane %d: no row for instance %d with ok %d · no %d%s:\n%s", i+1, k, in.Admitted, in.Offered-in.Admitted, down, view)
				}
			}
			compact = append(compact, fmt.Sprintf("#%d %d/%d%s", k, in.Admitted, in.Offered-in.Admitted, down))
		}
		if !full {
			found := strings.Contains(view, "│ ok/no "+strings.Join(compact, " ")+"\n")
			for n := 1; n < len(compact) && !found; n++ {
				found = strings.Contains(view, fmt.Sprintf("│ ok/no %s +%d more\n", strings.Join(compact[:n], " "), len(compact)-n))
			}
			if !found {
				t.Errorf("lane %d: no shared line of %q:\n%s", i+1, compact, view)
			}
		}
		if sum != res.Totals.Admitted {
			t.Errorf("lane %d: the instances admitted %d, the lane %d", i+1, sum, res.Totals.Admitted)
		}
		mustContain(t, view, fmt.Sprintf("│ total ok %d · limit ", sum))
	}
}

// The fleet scenario at 80×24, 1s in: six lanes of three rows leave no row per instance, so
// each fleet lane says its three instances on one line and its total on the next. Three local
// limiters each admit all their 100 (300, 1.68 times the limit), split's admit 59 of 100 each,
// the central store keeps the fleet to the limit, async lets 292 through. The limit is what
// one process admits: the first lane, saturated at 300/s offered, admits exactly 179.
func TestFleetInstancesCollapse80x24(t *testing.T) {
	m := open(t, "fleet", 80, 24)
	seek(m, "1s")
	view := m.View()
	checkLegible(t, m, "fleet at 1s, 80×24")
	checkFleetNumbers(t, m, view, false)
	mustContain(t, view,
		"▸ one process  admitted 179/300 · refused 121",
		"  local  admitted 300/300 · refused 0",
		"│ ok/no #0 100/0 #1 100/0 #2 100/0\n",
		"│ total ok 300 · limit 179 (1.68×)\n",
		"│ ok/no #0 59/41 #1 59/41 #2 59/41\n",
		"│ total ok 177 · limit 179 (0.99×)\n",
		"│ ok/no #0 60/40 #1 59/41 #2 60/40\n",
		"│ total ok 179 · limit 179 (1.00×)\n",
		"│ ok/no #0 92/8 #1 100/0 #2 100/0\n",
		"│ total ok 292 · limit 179 (1.63×)\n")
	if one := m.sim.lanes[0].Result().Totals.Admitted; one != 179 {
		t.Errorf("one process admitted %d by 1s, the limit on screen says 179", one)
	}
	if strings.Contains(view, "#0 [") {
		t.Errorf("rows per instance at 80×24, where a lane has two rows beside its chart:\n%s", view)
	}
	golden(t, "fleet-1s-80x24",
		"fleet at t=1s, 80×24: each fleet lane's three instances on one line (ok/no admitted/refused)\n"+
			"and its total against one limiter's 179; local 1.68×, the central store 1.00×.", view)
}

// At 120×40 a fleet lane has four rows beside its chart: one per instance, with its bar, and
// the total with the spec's overshoot window. 5s in, the store is down (4s to 6s): the two
// central lanes say so in their titles, fail-open has let 929 through, fail-closed 629.
func TestFleetInstanceRows120x40(t *testing.T) {
	m := open(t, "fleet", 120, 40)
	seek(m, "5s")
	view := m.View()
	checkLegible(t, m, "fleet at 5s, 120×40")
	checkFleetNumbers(t, m, view, true)
	mustContain(t, view,
		"  local  admitted 1500/1500 · refused 0\n",
		"│ #0 [████████████] ok 500 · no 0\n",
		"│ total ok 1500 · limit 779 (1.93×) · 1s max 300/179\n", // the run table's overshoot, 1.68
		"│ #0 [██████░░░░░░] ok 259 · no 241\n",
		"  central fail-open  admitted 929/1500 · refused 571 · store down\n",
		"  central fail-closed  admitted 629/1500 · refused 871 · store down\n",
		"│ total ok 629 · limit 779 (0.81×) · 1s max 179/179\n",
		"│ #1 [████████████] ok 500 · no  0\n") // async: columns line up
	if strings.Contains(view, "ok/no #0") {
		t.Errorf("the instances share a line at 120×40, where each has a row:\n%s", view)
	}
	golden(t, "fleet-5s-120x40",
		"fleet at t=5s, 120×40, the store down since 4s: a row per instance with its bar, then the\n"+
			"total against the limit (779 so far) and the most in one 1s window against 179.", view)

	seek(m, "3s")
	if v := m.View(); strings.Contains(v, "store down") {
		t.Errorf("the store is up at 3s, the screen says down:\n%s", v)
	}
}

// Ten instances do not fit one 40-cell line: the last are counted, never cut.
func TestManyInstancesAreCountedNotCut(t *testing.T) {
	sc, err := scenarios.Get("fleet")
	if err != nil {
		t.Fatal(err)
	}
	sc.Fleet.Instances = 10 // split needs capacity 30 and 150/s to divide
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	seek(m, "2s")
	checkLegible(t, m, "ten instances at 2s")
	line := regexp.MustCompile(`│ (ok/no .*)\n`).FindAllStringSubmatch(m.View()+"\n", -1)
	if len(line) != 5 {
		t.Fatalf("%d shared instance lines, want one per fleet lane (5):\n%s", len(line), m.View())
	}
	whole := regexp.MustCompile(`^ok/no( #\d+ \d+/\d+)+ \+\d+ more$`)
	for _, l := range line {
		if !whole.MatchString(l[1]) {
			t.Errorf("%q: not whole instances then a count", l[1])
		}
	}
	lane := m.sim.lanes[1].Result().Fleet.Instances
	if want := fmt.Sprintf("#0 %d/%d #1 %d/%d", lane[0].Admitted, lane[0].Offered-lane[0].Admitted, lane[1].Admitted, lane[1].Offered-lane[1].Admitted); !strings.Contains(line[0][1], want) {
		t.Errorf("local's line %q lacks its first instances %q", line[0][1], want)
	}
}

// k switches every keyed lane to its top keys and back. Noisy-neighbour at 1s, 80×24: the
// neighbour is both the busiest and the most refused key everywhere; the global limiter
// admitted 130 of its 556, the per-key buckets 29 (its own 20 + 10/s); fairness 0.03 against
// 0.67. The numbers are the engine's, TopOffered and TopRefused.
func TestTopKeysToggle80x24(t *testing.T) {
	m := open(t, "noisy-neighbour", 80, 24)
	seek(m, "1s")
	before := m.View()
	if cmd := press(m, "k"); cmd != nil {
		t.Error("k scheduled a command")
	}
	view := m.View()
	checkLegible(t, m, "noisy-neighbour top keys at 1s")
	mustContain(t, view,
		"▸ token-bucket:capacity=20,rate=200/1s  admitted 219/956 · refused 737\n"+
			"   100 keys · fairness 0.03 (Jain's index: 1 when every key is admitted alike)\n"+
			"   most offered         offered  ok  no │ most refused         offered  ok  no\n"+
			"   noisy-neighbour          556 130 426 │ noisy-neighbour          556 130 426\n",
		"   100 keys · fairness 0.67 · table 100/1000 held, 0 evicted, 0 full\n",
		"   100 keys · fairness 0.67 · table 50/50 held, 189 evicted, 4 full\n",
		"   noisy-neighbour           556 29 527 │ noisy-neighbour           556 29 527\n",
		"top keys of 4 of 4 lanes: busiest and most refused (k: charts)")
	for i, lane := range m.sim.lanes {
		res := lane.Result()
		top, refused := lane.TopOffered(1)[0], res.Keys.TopRefused[0]
		for _, k := range []engine.KeyCount{top, refused} {
			if !regexp.MustCompile(fmt.Sprintf(`%s +%d +%d +%d`, k.Key, k.Offered, k.Admitted, k.NotAdmitted())).MatchString(view) {
				t.Errorf("lane %d: %s (%d offered, %d ok, %d no) is not on screen:\n%s", i+1, k.Key, k.Offered, k.Admitted, k.NotAdmitted(), view)
			}
		}
	}
	if strings.Contains(view, "TAT") || strings.Contains(view, "ok ▁") {
		t.Errorf("the top-keys view still shows a chart or a state:\n%s", view)
	}
	press(m, "k")
	lanes := func(v string) string { return v[:strings.Index(v, "── log")] }
	if got := m.View(); lanes(got) != lanes(before) {
		t.Errorf("k again did not bring the charts back as they were:\n%s\nwas\n%s", got, before)
	}
}

// At 120×40, the end of noisy-neighbour: four keys a list. The global limiter refuses every
// client; a token bucket per key refuses only the neighbour, so its list of the most refused
// has one key; evict=fresh refuses a few new clients while its table is full.
func TestTopKeysAtTheEnd120x40(t *testing.T) {
	m := open(t, "noisy-neighbour", 120, 40)
	press(m, "end", "k")
	view := m.View()
	checkLegible(t, m, "noisy-neighbour top keys at the end")
	mustContain(t, view,
		"   101 keys · fairness 0.03 (Jain's index: 1 when every key is admitted alike)\n",
		"   noisy-neighbour                           5928 1238 4690 │ noisy-neighbour                           5928 1238 4690\n",
		"   client-47                                   55    8   47 │ client-47                                   55    8   47\n",
		"   noisy-neighbour                            5928 119 5809 │ noisy-neighbour                            5928 119 5809\n"+
			"   client-47                                    55  55    0 │\n", // per key, nobody else is refused
		"   101 keys · fairness 0.94 · table 50/50 held, 1947 evicted, 100 full\n", // too long with the explanation: it gives way
		"   101 keys · fairness 0.94 (Jain's index: 1 when every key is admitted alike) · table 50/50 held, 2041 evicted, 0 full\n",
		"   client-47                                    55  54    1 │ client-83                                    37  33    4\n")
	keyed := m.sim.lanes[1]
	if n := len(keyed.Result().Keys.TopRefused); n != 1 {
		t.Errorf("the per-key lane refused %d keys, the screen lists one", n)
	}
	golden(t, "noisy-neighbour-keys-120x40",
		"noisy-neighbour at the end, 120×40, top keys (k): the busiest and most refused keys of\n"+
			"each lane; per key only the neighbour is refused (fairness 0.94 against 0.03).", view)
}

// k on a scenario without keys says so, every time, and changes no lane.
func TestTopKeysWithoutKeysSaysSo(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, ".", ".")
	before := m.View()
	press(m, "k", "k")
	view := m.View()
	mustContain(t, view, "top keys: no lane has seen two keys yet")
	if m.topKeys {
		t.Error("k turned the top-keys view on with no keyed lane to show")
	}
	if strings.Count(view, "TAT") != strings.Count(before, "TAT") {
		t.Errorf("a lane without keys changed under k:\n%s", view)
	}
}

// Paused on the fleet, nothing is scheduled: the frame already on its way when space paused
// schedules no other, and no key that only changes the view (k, tab, x, ?, +, -) nor a step
// starts a tick. Whatever a key returns is run, and none is a frame.
func TestPausedFleetSchedulesNoTick(t *testing.T) {
	m := open(t, "fleet", 80, 24)
	if press(m, "space") == nil {
		t.Fatal("play scheduled no frame")
	}
	frames(m, 3)
	pending := m.tickGen
	if cmd := press(m, "space"); cmd != nil {
		t.Fatal("pause scheduled a command")
	}
	now := m.sim.now
	if _, cmd := m.Update(tickMsg{gen: pending}); cmd != nil || m.sim.now != now {
		t.Fatal("the frame that arrived after pausing advanced time or scheduled another")
	}
	for _, k := range []string{"k", "k", "tab", "x", "?", "?", "+", "-", ".", ",", "["} {
		cmd := press(m, k)
		if cmd == nil {
			continue
		}
		if msg := cmd(); msg != nil {
			if _, ok := msg.(tickMsg); ok {
				t.Errorf("key %q while paused scheduled a frame", k)
			}
		}
	}
	if m.playing {
		t.Error("a key started the play")
	}
}

// An instance that left takes nothing more and says so, in its row and on the shared line:
// the fleet scenario with instance 1 leaving at 2s, at 3s. Local's instance 1 stopped at the
// 200 requests of its first 2s; the other two took its share since (100 + 50/s each: 350).
func TestALeftInstanceSaysDown(t *testing.T) {
	sc, err := scenarios.Get("fleet")
	if err != nil {
		t.Fatal(err)
	}
	sc.Faults = append(sc.Faults, engine.Fault{Kind: engine.FaultLeave, Instance: 1, At: 2 * time.Second})
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	seek(m, "1s")
	if strings.Contains(m.View(), "down") {
		t.Errorf("an instance is down at 1s, before it left:\n%s", m.View())
	}
	seek(m, "3s")
	checkLegible(t, m, "instance 1 left, 80×24")
	checkFleetNumbers(t, m, m.View(), false)
	mustContain(t, m.View(), "│ ok/no #0 350/0 #1 200/0 down #2 350/0\n")
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	checkLegible(t, m, "instance 1 left, 120×40")
	checkFleetNumbers(t, m, m.View(), true)
	mustContain(t, m.View(), "│ #1 [████████████] ok 200 · no 0 · down\n")
}
