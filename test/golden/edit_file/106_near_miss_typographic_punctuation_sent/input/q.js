const s = "it's - fine";
