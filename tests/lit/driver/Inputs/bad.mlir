builtin.module {
  // the next line is not a tile op
  "tile.nonsense"() : () -> ()
}
