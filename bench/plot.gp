# plot.gp — the picture of a doca_bench run (called by doca_bench; or by hand:
#   gnuplot -e "dir='bench/results'; out='bench/results/latest.svg'; tpcols=4; latrows=3" bench/plot.gp)
# Left: throughput vs copy size (ours inline and offload, DPDK skeleton,
# memcpy: the columns measured, tpcols of them, named in the file's header).
# Right: latency percentiles of one copy at a time (ours vs DPDK skeleton vs
# a raw ck ping-pong round trip: latrows rows). A panel with no data is left out.
if (!exists("dir")) dir = 'bench/results'
if (!exists("out")) out = dir.'/latest.svg'
if (!exists("tpcols")) tpcols = 4
if (!exists("latrows")) latrows = 3
panels = (tpcols > 0) + (latrows > 0)
set terminal svg size (panels > 1 ? 1200 : 650),500 dynamic font "sans,11" background rgb "white"
set output out
set datafile missing "NaN"
set multiplot layout 1,panels title "doca-core vs peers (medians of interleaved repetitions)"

if (tpcols > 0) {
	set title "throughput vs copy size"
	set logscale xy
	set xlabel "copy size (bytes)"
	set ylabel "GB/s"
	set key top left
	set grid
	set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
	plot for [i=2:tpcols+1] dir.'/throughput.dat' using 1:i with linespoints lw 2 pt (2*i+3) title columnheader(i)
}

if (latrows > 0) {
	set title "latency, one copy at a time"
	unset logscale
	unset offsets
	set logscale y
	set xlabel ""
	set ylabel "ns"
	set style data histogram
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set boxwidth 0.9
	set xtics rotate by -30
	set key top left
	plot dir.'/latency.dat' using 2:xtic(1) title "p50", '' using 3 title "p99", '' using 4 title "p99.9"
}
unset multiplot
