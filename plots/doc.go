// Package plots draws ratelab's runs as documentation-quality figures with gonum/plot.
//
// Every chart is a pure function from a scenario and its results to a *Figure (Build, or the
// chart functions Timeline, Rate, State, Guarantee, WarmUp and Downstream); rendering is a
// separate step (Figure.Write for PNG or SVG, Figure.Draw onto any gonum canvas, Figure.Plots
// for the panels as *plot.Plot). A Figure holds the plotted data, not pixels, so Figure.Dump
// prints it as reviewable text: the golden files in testdata/ pin every chart's points.
//
// One style everywhere (style.go): each limiter kind has one Okabe–Ito colour in every chart
// (KindColor); offered traffic is a grey area, refusals are black and dotted, bounds and
// documented curves are black and dashed; the legend is a row above the panels, so it never
// covers data; titles name the scenario, subtitles its parameters, axes their units.
//
// Long runs cost the same to draw as short ones: charts come from the engine's bins, rates are
// grouped to at most 150 bins, and any line with more points than four per pixel column is
// reduced to each column's extremes (Envelope, Columns) before it reaches the rasteriser.
// A 1M-request run renders each chart in about 0.15s (BenchmarkRender).
package plots
