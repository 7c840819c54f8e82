foo = 1
bar(foo)
foo + foo
done
