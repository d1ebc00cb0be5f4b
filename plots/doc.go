// Package plots draws ratelab's runs as documentation-quality figures with gonum/plot.
//
// Every chart is a pure function from a scenario, its results and the caller's Params (a
// stretch of virtual time, View{From, To}; the guarantee chart's window) to a *Figure: the
// chart functions Timeline, Rate, State, Guarantee, WarmUp, Downstream, Fleet and Waits, one
// file each, each registered once in Charts with what it needs to apply; Build and BuildWith
// find a chart by name and build it once. Rendering is a separate step (Figure.Write for PNG,
// SVG or an animated GIF, Figure.Draw onto any gonum canvas, Figure.Plots for the panels as
// *plot.Plot). A Figure holds the plotted data, not pixels, so Figure.Dump prints it as
// reviewable text: the golden files in testdata/ pin the charts' points.
//
// One style everywhere (style.go): each limiter kind has one Okabe–Ito colour in every chart
// (KindColor), and in the fleet chart each instance one of six (InstanceColor); offered
// traffic is a grey area; measured data are solid lines, marks, bands and bars; dashes and
// dots are kept for references — bounds and documented curves black, the configured limit
// grey dotted, window and slot boundaries (limiters.Grid) thin lines in the kind's colour;
// refusals are black, drawn below zero in the rate chart so that they never hide under an
// equal admitted line. The legend is a row above the panels, so it never covers data; titles
// name the scenario, subtitles its parameters, axes their units.
//
// Long runs cost the same to draw as short ones: charts come from the engine's bins, rates are
// grouped to at most 150 bins, the state chart draws more than 150/columns bins as each span's
// range (a band, said in the legend) and mean, and any line with more points than four per
// pixel column is reduced to each column's extremes (Envelope, Columns) before it reaches the
// rasteriser. A 1M-request run renders each chart in about 0.15s (BenchmarkRender).
//
// WriteGIF animates a chart with a time axis: 48 frames draw it up to a moving "now" line,
// then the whole chart is held. Colours come from a fixed palette (white, greys, every
// registry kind in tints), and each frame after the first stores only what changed, so a
// built-in scenario's animation is 70–420 KB and the same figure gives the same bytes.
package plots
