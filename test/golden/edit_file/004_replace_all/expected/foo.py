qux = 1
bar(qux)
qux + qux
done
