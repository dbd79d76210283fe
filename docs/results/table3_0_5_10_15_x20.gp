set terminal pngcairo size 900,560
set output "table3_0_5_10_15_x20.png"
set title "Table 3, 4 peers 20x: honest mean accuracy against virtual time"
set xlabel "virtual seconds"
set ylabel "honest mean test accuracy"
set yrange [0.6:0.9]
set key bottom right
set grid
plot for [i=0:5] "table3_0_5_10_15_x20.dat" index i using 1:2 with linespoints pt 7 ps 0.4 title columnheader(1)
