package render

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// The waterfall, like a browser's network panel: one row per lookup, per
// delay and per attempt; three text columns (lane, status, time) and the
// bars on a time axis in ms. Text sits only in the columns, the header and
// the legend, never on the bars, so labels cannot collide however the
// race went; column widths come from the longest text they hold.
const (
	svgPad      = 16.0
	svgCharW    = 7.3 // a 12 px monospace glyph (0.6 em), rounded up
	svgTitleW   = 9.0 // a 15 px bold sans-serif glyph, generous
	svgRowH     = 26.0
	svgBarH     = 12.0
	svgPlotW    = 640.0
	svgHeaderY  = 72.0 // column headers and tick labels
	svgLanesY   = 82.0
	svgMaxChars = 44 // status text is cut beyond this (the tooltip has it all)
)

// Colours (fill) by what a bar is.
const (
	colLookup   = "#3b7dd8"
	colFailed   = "#d64541"
	colWon      = "#2e9d49"
	colLoser    = "#9aa0a6"
	colUnneeded = "#c7c9cc"
	colRD       = "#f2a93b"
	colAD       = "#9b7fd1"
	colGrid     = "#e3e3e3"
	colText     = "#202124"
	colMuted    = "#5f6368"
)

type svgLane struct {
	kind, name, status, time, tooltip string
	attrs                             string // data-* attributes
	bars                              []svgBar
}

type svgBar struct {
	start, end time.Duration
	fill       string
	planned    time.Duration // a delay's planned end (outline), 0 if none
	strong     bool
}

// WriteSVG writes the race as a self-contained SVG waterfall.
func WriteSVG(w io.Writer, events []race.TraceEvent, meta Meta) error {
	if len(events) == 0 {
		return ErrNoEvents
	}
	m := build(events)
	lanes := svgLanes(m)

	title := "hev2 race"
	if meta.Host != "" {
		title += ": " + meta.Host + " port " + strconv.Itoa(int(meta.Port))
	}
	summary := svgSummary(m)

	nameW, statusW, timeW := textWidth("lane"), textWidth("status"), textWidth("999999.9 ms")
	for _, l := range lanes {
		nameW = math.Max(nameW, textWidth(l.name))
		statusW = math.Max(statusW, textWidth(l.status))
	}
	nameX := svgPad
	statusX := nameX + nameW + 16
	timeX := statusX + statusW + 16
	plotX := timeX + timeW + 40
	width := plotX + svgPlotW + 56
	width = math.Max(width, svgPad*2+float64(len(title))*svgTitleW)
	if maxChars := int((width - 2*svgPad) / svgCharW); len(summary) > maxChars {
		summary = cut(summary, maxChars)
	}

	end := m.end
	if m.done {
		end = m.doneAt
	}
	step, ticks := axisTicks(end)
	axisMax := step * float64(ticks)
	x := func(d time.Duration) float64 {
		return plotX + svgPlotW*(float64(d)/float64(time.Millisecond))/axisMax
	}
	lanesEnd := svgLanesY + svgRowH*float64(len(lanes))
	legend, legendH := svgLegend(width, lanesEnd+28)
	height := lanesEnd + 28 + legendH + svgPad

	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="monospace" font-size="12">`+"\n",
		f1(width), f1(height), f1(width), f1(height))
	p("<title>%s</title>\n<desc>%s</desc>\n", esc(title), esc(summary))
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	p(`<text class="label title" x="%s" y="26" font-family="sans-serif" font-size="15" font-weight="bold" fill="%s">%s</text>`+"\n", f1(svgPad), colText, esc(title))
	p(`<text class="label summary" x="%s" y="48" fill="%s">%s</text>`+"\n", f1(svgPad), colText, esc(summary))

	// Zebra rows, then the grid and tick labels over them.
	for i := range lanes {
		if i%2 == 0 {
			p(`<rect x="%s" y="%s" width="%s" height="%s" fill="#f6f7f8"/>`+"\n", f1(svgPad/2), f1(svgLanesY+svgRowH*float64(i)), f1(width-svgPad), f1(svgRowH))
		}
	}
	p(`<g class="axis">` + "\n")
	for _, h := range []struct {
		x    float64
		text string
	}{{nameX, "lane"}, {statusX, "status"}, {timeX, "time"}} {
		p(`<text class="label header" x="%s" y="%s" font-weight="bold" fill="%s">%s</text>`+"\n", f1(h.x), f1(svgHeaderY), colMuted, h.text)
	}
	for t := 0; t <= ticks; t++ {
		v := step * float64(t)
		tx := plotX + svgPlotW*v/axisMax
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", f1(tx), f1(svgLanesY-4), f1(tx), f1(lanesEnd), colGrid)
		p(`<text class="label tick" x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n", f1(tx), f1(svgHeaderY), colMuted, tickText(v, step))
	}
	p("</g>\n")

	for i, l := range lanes {
		top := svgLanesY + svgRowH*float64(i)
		mid := top + svgRowH/2
		p(`<g class="lane" data-kind="%s"%s>`+"\n", l.kind, l.attrs)
		p("<title>%s</title>\n", esc(l.tooltip))
		for _, bar := range l.bars {
			x0, x1 := x(bar.start), x(bar.end)
			if bar.planned > bar.start {
				// A delay planned past the race's end is cut at the axis.
				px := math.Min(x(bar.planned), plotX+svgPlotW)
				p(`<rect class="planned" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="%s" stroke-dasharray="3 2"/>`+"\n",
					f1(x0), f1(mid-svgBarH/2), f1(math.Max(px-x0, 2)), f1(svgBarH), bar.fill)
			}
			stroke := ""
			switch {
			case bar.strong:
				stroke = ` stroke="#145c27" stroke-width="2"`
			case bar.planned > 0:
				stroke = ` stroke="#ffffff" stroke-width="1"` // back-to-back delays stay apart
			}
			p(`<rect class="bar" x="%s" y="%s" width="%s" height="%s" rx="2" fill="%s"%s/>`+"\n",
				f1(x0), f1(mid-svgBarH/2), f1(math.Max(x1-x0, 2)), f1(svgBarH), bar.fill, stroke)
		}
		p(`<text class="label name" x="%s" y="%s" fill="%s">%s</text>`+"\n", f1(nameX), f1(mid+4), colText, esc(l.name))
		weight := ""
		if l.kind == "attempt" && strings.HasPrefix(l.status, "WINNER") {
			weight = ` font-weight="bold"`
		}
		p(`<text class="label status" x="%s" y="%s" fill="%s"%s>%s</text>`+"\n", f1(statusX), f1(mid+4), colText, weight, esc(l.status))
		p(`<text class="label time" x="%s" y="%s" fill="%s">%s</text>`+"\n", f1(timeX), f1(mid+4), colMuted, esc(l.time))
		p("</g>\n")
	}

	// Moments across every lane: the winner, the caller's timeouts.
	if m.winner >= 0 {
		for _, a := range m.attempts {
			if a.id == m.winner {
				p(`<line class="marker winner" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>`+"\n",
					f1(x(a.end)), f1(svgLanesY-4), f1(x(a.end)), f1(lanesEnd), colWon)
			}
		}
	}
	for _, t := range m.timeouts {
		p(`<line class="marker timeout" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="2 2"/>`+"\n",
			f1(x(t.at)), f1(svgLanesY-4), f1(x(t.at)), f1(lanesEnd), colFailed)
	}
	b.WriteString(legend)
	b.WriteString("</svg>\n")
	return b.Flush()
}

// svgLanes lays the race out: lookups, the delays, then the attempts.
func svgLanes(m *model) []svgLane {
	var lanes []svgLane
	for _, l := range m.lookups {
		end := m.laneEnd(l.outcome, l.end)
		ln := svgLane{kind: "lookup", name: recordType(l.family) + " lookup", time: msText(end - l.start),
			attrs: fmt.Sprintf(` data-family="%s" data-outcome="%s"`, familyName(l.family), l.outcome)}
		fill := colLookup
		switch l.outcome {
		case outAnswered:
			addrs := make([]string, len(l.addrs))
			for i, a := range l.addrs {
				addrs[i] = a.String()
			}
			ln.status = plural(len(addrs), "address", "addresses") + ": " + strings.Join(addrs, " ")
			ln.tooltip = recordType(l.family) + " answered after " + msText(end-l.start) + ": " + strings.Join(addrs, ", ")
		case outFailed:
			fill = colFailed
			ln.status = "failed " + errCode(l.err)
			ln.tooltip = recordType(l.family) + " failed after " + msText(end-l.start) + ": " + errText(l.err)
		case outCanceled:
			fill = colUnneeded
			ln.status = "canceled (no longer needed)"
			ln.tooltip = recordType(l.family) + " lookup canceled after " + msText(end-l.start)
		default:
			fill = colUnneeded
			ln.status = "no answer"
			ln.tooltip = recordType(l.family) + " lookup had no answer when the trace ended"
		}
		ln.status = cut(ln.status, svgMaxChars)
		ln.bars = []svgBar{{start: l.start, end: end, fill: fill}}
		lanes = append(lanes, ln)
	}
	lanes = append(lanes, svgServiceLanes(m)...)
	if len(m.rd) > 0 {
		ln := svgLane{kind: "timer", name: "Resolution Delay", attrs: ` data-timer="resolution-delay"`}
		var waited time.Duration
		for _, sp := range m.rd {
			waited += sp.end - sp.start
			ln.bars = append(ln.bars, svgBar{start: sp.start, end: sp.end, planned: sp.until, fill: colRD})
		}
		ln.status = "A answered first: wait for AAAA"
		ln.time = msText(waited)
		ln.tooltip = fmt.Sprintf("Resolution Delay: waited %s of %s for AAAA", msText(waited), msText(m.rd[0].until-m.rd[0].start))
		lanes = append(lanes, ln)
	}
	if len(m.ad) > 0 {
		ln := svgLane{kind: "timer", name: "attempt delay", attrs: ` data-timer="attempt-delay"`}
		for _, sp := range m.ad {
			ln.bars = append(ln.bars, svgBar{start: sp.start, end: sp.end, planned: sp.until, fill: colAD})
		}
		var waited time.Duration
		for _, sp := range m.ad {
			waited += sp.end - sp.start
		}
		if len(m.ad) == 1 {
			ln.status = "next attempt due at " + msText(m.ad[0].until)
		} else {
			ln.status = plural(len(m.ad), "timer", "timers") + ", each until the next attempt"
		}
		ln.time = msText(waited)
		ln.tooltip = "Connection Attempt Delay: the next attempt starts when it runs out, or at once when an attempt fails"
		lanes = append(lanes, ln)
	}
	for _, a := range m.attempts {
		end := m.laneEnd(a.outcome, a.end)
		ln := svgLane{kind: "attempt", name: "#" + strconv.Itoa(a.id) + " " + a.addr.String(), time: msText(end - a.start),
			attrs: fmt.Sprintf(` data-attempt="%d" data-family="%s" data-outcome="%s"`, a.id, familyName(race.FamilyOf(a.addr.Addr())), a.outcome)}
		bar := svgBar{start: a.start, end: end}
		switch a.outcome {
		case outWon:
			bar.fill, bar.strong = colWon, true
			ln.status = "WINNER: connected"
		case outFailed:
			bar.fill = colFailed
			ln.status = "failed " + errCode(a.err)
		case outClosed:
			bar.fill = colLoser
			ln.status = "closed: lost the race"
		default:
			bar.fill = colUnneeded
			ln.status = "still connecting"
		}
		ln.tooltip = fmt.Sprintf("attempt #%d to %s: %s after %s", a.id, a.addr, ln.status, msText(end-a.start))
		if a.err != nil {
			ln.tooltip += " (" + errText(a.err) + ")"
		}
		ln.bars = []svgBar{bar}
		lanes = append(lanes, ln)
	}
	return lanes
}

// svgServiceLanes are the HTTPS part's lookups (Happy Eyeballs v3), one
// lane each, after the address lookups: the HTTPS query of the query name
// and of each alias target, and each service target's A/AAAA. The last
// HTTPS lane's status ends with the query's final state.
func svgServiceLanes(m *model) []svgLane {
	lastHTTPS := -1
	for i, l := range m.services {
		if l.query == race.QueryHTTPS {
			lastHTTPS = i
		}
	}
	var lanes []svgLane
	for i, l := range m.services {
		end := m.laneEnd(l.outcome, l.end)
		name := strings.TrimSuffix(l.name, ".")
		ln := svgLane{kind: "service", name: cut(l.query.String()+" "+name, svgMaxChars), time: msText(end - l.start),
			attrs: fmt.Sprintf(` data-query="%s" data-name="%s" data-outcome="%s"`, l.query, esc(name), l.outcome)}
		fill := colLookup
		what := l.query.String() + " " + name
		switch l.outcome {
		case outAnswered:
			if l.query == race.QueryHTTPS {
				ln.status = plural(l.records, "service record", "service records")
				if l.records == 0 && i+1 < len(m.services) && m.services[i+1].query == race.QueryHTTPS && m.services[i+1].start == l.end {
					ln.status = "alias to " + strings.TrimSuffix(m.services[i+1].name, ".")
				}
			} else {
				addrs := make([]string, len(l.addrs))
				for k, a := range l.addrs {
					addrs[k] = a.String()
				}
				ln.status = plural(len(addrs), "address", "addresses") + ": " + strings.Join(addrs, " ")
			}
			ln.tooltip = what + " answered after " + msText(end-l.start) + ": " + ln.status
		case outFailed:
			fill = colFailed
			ln.status = "failed " + errCode(l.err)
			ln.tooltip = what + " failed after " + msText(end-l.start) + ": " + errText(l.err)
		case outCanceled:
			fill = colUnneeded
			ln.status = "canceled (no longer needed)"
			ln.tooltip = what + " canceled after " + msText(end-l.start)
		default:
			fill = colUnneeded
			ln.status = "no answer"
			ln.tooltip = what + " had no answer when the trace ended"
		}
		if i == lastHTTPS {
			state := m.httpsState
			if state == "" {
				state = "no answer in time"
			}
			if state == "answered" {
				state = plural(len(m.svcs), "usable service", "usable services")
			}
			ln.status += "; " + state
			ln.tooltip += " (HTTPS query: " + state + ")"
			for _, svc := range m.svcs {
				ln.tooltip += "; service " + strconv.Itoa(svc.index) + ": " + svc.describe()
			}
		}
		ln.status = cut(ln.status, svgMaxChars)
		ln.bars = []svgBar{{start: l.start, end: end, fill: fill}}
		lanes = append(lanes, ln)
	}
	return lanes
}

// svgSummary is the line under the title: how the race ended.
func svgSummary(m *model) string {
	if m.winner >= 0 {
		for _, a := range m.attempts {
			if a.id == m.winner {
				fam := "IPv6"
				if race.FamilyOf(a.addr.Addr()) == race.IPv4 {
					fam = "IPv4"
				}
				return fmt.Sprintf("connected to %s (%s, attempt #%d) in %s", a.addr, fam, a.id, msText(a.end))
			}
		}
	}
	if m.done {
		if m.doneErr != nil {
			return "failed after " + msText(m.doneAt) + ": " + m.doneErr.Error()
		}
		return "ended after " + msText(m.doneAt)
	}
	return "in progress at " + msText(m.end) + " (the trace ends here)"
}

// svgLegend draws the colour key, wrapping when a row is full.
func svgLegend(width, y float64) (string, float64) {
	items := []struct{ fill, text string }{
		{colLookup, "lookup answered"}, {colWon, "winner"}, {colFailed, "failed"},
		{colLoser, "closed (loser)"}, {colUnneeded, "not needed / no outcome"},
		{colRD, "Resolution Delay"}, {colAD, "attempt delay (dashed: as planned)"},
	}
	var b strings.Builder
	b.WriteString(`<g class="legend">` + "\n")
	x, rows := svgPad, 1.0
	for _, it := range items {
		w := 12 + 6 + textWidth(it.text) + 18
		if x+w > width-svgPad && x > svgPad {
			x, y, rows = svgPad, y+20, rows+1
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="12" height="12" rx="2" fill="%s"/>`+"\n", f1(x), f1(y-10), it.fill)
		fmt.Fprintf(&b, `<text class="label legend" x="%s" y="%s" fill="%s">%s</text>`+"\n", f1(x+18), f1(y), colMuted, esc(it.text))
		x += w
	}
	b.WriteString("</g>\n")
	return b.String(), rows * 20
}

// axisTicks picks a round step (1, 2 or 5 times a power of ten, in ms)
// giving at most 8 intervals that cover end.
func axisTicks(end time.Duration) (step float64, n int) {
	total := float64(end) / float64(time.Millisecond)
	if total <= 0 {
		total = 1
	}
	base := math.Pow(10, math.Floor(math.Log10(total/8)))
	for _, mult := range []float64{1, 2, 5, 10, 20, 50} {
		step = base * mult
		n = int(math.Ceil(total/step - 1e-9))
		if n <= 8 {
			break
		}
	}
	if n < 1 {
		n = 1
	}
	return step, n
}

// tickText prints a tick's value with as many decimals as the step needs.
func tickText(v, step float64) string {
	dec := 0
	for s := step; s < 1 && dec < 6; s *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + " ms"
}

func textWidth(s string) float64 { return float64(len([]rune(s))) * svgCharW }

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// errText is an error's full text for tooltips.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func esc(s string) string { return xmlEscaper.Replace(s) }
