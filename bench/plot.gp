# plot.gp — the picture of a doca_bench run (called by doca_bench; or by hand:
#   gnuplot -e "dir='bench/results'; out='bench/results/latest.svg'" bench/plot.gp)
# Left: throughput vs copy size (ours inline and offload, DPDK skeleton, memcpy).
# Right: latency percentiles of one copy at a time (ours vs DPDK skeleton vs a
# raw ck ping-pong round trip).
if (!exists("dir")) dir = 'bench/results'
if (!exists("out")) out = dir.'/latest.svg'
set terminal svg size 1200,500 dynamic font "sans,11" background rgb "white"
set output out
set datafile missing "NaN"
set multiplot layout 1,2 title "doca-core vs peers (medians of interleaved repetitions)"

set title "throughput vs copy size"
set logscale xy
set xlabel "copy size (bytes)"
set ylabel "GB/s"
set key top left
set grid
plot dir.'/throughput.dat' using 1:2 with linespoints lw 2 pt 7 title "doca inline (batch 32)", \
     ''                    using 1:3 with linespoints lw 2 pt 5 title "doca offload (engine on CPU 1)", \
     ''                    using 1:4 with linespoints lw 2 pt 9 title "DPDK dma skeleton", \
     ''                    using 1:5 with linespoints lw 2 pt 13 dt 2 title "memcpy, one thread"

set title "latency, one copy at a time"
unset logscale
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
unset multiplot
