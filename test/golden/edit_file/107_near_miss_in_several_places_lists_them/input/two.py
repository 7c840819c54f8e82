def a():
	x = 1
def b():
		x = 1
