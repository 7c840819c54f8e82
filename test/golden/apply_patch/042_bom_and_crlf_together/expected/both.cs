using System;
using System.IO;
class A {}
