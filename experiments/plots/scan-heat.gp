# scan-heat.gp -- the risk score of bf16emu scan as a heat map, one cell
# per layer (y) and head (x).
# Variables (gnuplot -e), all set by bf16emu scan:
#   datafile  rows "layer head risk", a blank line between layers
#   out       the output path without extension (.png and .svg are written)
#   title     the plot's title
if (!exists("datafile")) datafile = 'scan.dat'
if (!exists("out")) out = 'scan'
if (!exists("title")) title = "Risk by layer and head"

set xlabel "head"
set ylabel "layer"
set cblabel "risk (rows with two or more P~ = 1) x (V features of one sign)"
set title title
set cbrange [0:*]
set palette defined (0 "#FFFFFF", 0.25 "#FDE0C5", 0.5 "#F59E72", 0.75 "#D1495B", 1 "#5C0029")
set xtics 1
set ytics 1
set offsets 0.5, 0.5, 0.5, 0.5
set border lw 1
unset key
set tics out
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 900,700 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 900,700 noenhanced font ",10"
        set output out.'.svg'
    }
    # one box per cell, so layers with different head counts stay square
    plot datafile using 2:1:(0.5):(0.5):3 with boxxyerror \
         fillstyle solid 1.0 border lc rgb "#BBBBBB" lc palette
    unset output
}
