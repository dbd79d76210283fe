set terminal pngcairo size 900,560
set output "table2_ef-g03.png"
set title "Table 2, EC ef, γ = 0.3: honest mean accuracy against MB sent per peer"
set xlabel "MB sent per peer (log scale)"
set ylabel "honest mean test accuracy"
set logscale x
set yrange [0.6:0.9]
set key bottom right
set grid
plot for [i=0:8] "table2_ef-g03.dat" index i using 1:2 with linespoints pt 7 ps 0.4 title columnheader(1)
