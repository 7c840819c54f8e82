x = 1
y = 2
x = 1
z = 3
x = 1
