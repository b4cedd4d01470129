# sweep-bias.gp -- a bias measured by bf16emu sweep against one swept
# parameter, one series per combination of the other swept parameters,
# error bars from the 95% intervals where they are defined (a point
# without one has no bar, and the title says why).
# Variables (gnuplot -e), all set by bf16emu sweep:
#   datafile  blocks: a quoted series title line, then "x mean lo hi" rows
#             (lo, hi NaN: no interval)
#   out       the output path without extension (.png and .svg are written)
#   nseries   the number of blocks
#   xlabel, ylabel, title (lines joined by \n)
#   xmin, xmax  the x range (padded)
#   logx      1: a logarithmic x axis
#   named     1: x is the position of a name; points without lines
#   rotate    1: slanted x tic labels (long names)
#   xtics     "" or a gnuplot tic list ("(\"fa2\" 0, \"repo\" 1)")
#   dodge     the x offset between neighbouring series (in log10 units
#             when logx), so that their error bars stay apart
if (!exists("datafile")) datafile = 'bias-vmean.dat'
if (!exists("out")) out = 'bias-vmean'
if (!exists("nseries")) nseries = 1
if (!exists("xlabel")) xlabel = "mean of V"
if (!exists("ylabel")) ylabel = "mean signed error of O (ulps of O's format)"
if (!exists("title")) title = "Rounding bias"
if (!exists("logx")) logx = 0
if (!exists("named")) named = 0
if (!exists("xtics")) xtics = ""
if (!exists("dodge")) dodge = 0

# eight colours that stay apart for colour-blind readers, and ten markers:
# series i gets colour i mod 8 and marker i mod 10
colors = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #8C564B"
markers = "7 5 9 11 13 15 6 4 8 12"
color(i) = word(colors, i % 8 + 1)
marker(i) = int(word(markers, i % 10 + 1))
shift(i) = (i - (nseries - 1) / 2.0) * dodge
xpos(x, i) = logx ? x * 10 ** shift(i) : x + shift(i)

set xlabel xlabel
set ylabel ylabel
set title title
if (nseries > 1) {
    set key outside right top vertical Left reverse noenhanced
} else {
    unset key
}
set grid
set xzeroaxis lt -1
set bars small
set offsets 0, 0, graph 0.06, graph 0.06
if (exists("xmin") && exists("xmax")) set xrange [xmin:xmax]
if (logx) set logscale x 2
if (xtics ne "") eval "set xtics ".xtics
if (exists("rotate") && rotate) set xtics rotate by -25

style = named ? "points" : "linespoints"
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 1000,600 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 1000,600 noenhanced font ",10"
        set output out.'.svg'
    }
    plot for [i=0:nseries-1] datafile index i using (xpos($1, i)):2 \
            with @style lw 1.5 lc rgb color(i) pt marker(i) ps 1.2 \
            title columnheader(1), \
         for [i=0:nseries-1] datafile index i using (xpos($1, i)):2:3:4 \
            with yerrorbars lw 1.2 lc rgb color(i) pt marker(i) ps 1.2 \
            notitle
    unset output
}
