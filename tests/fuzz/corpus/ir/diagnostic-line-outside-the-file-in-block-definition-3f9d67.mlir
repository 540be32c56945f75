// signature: diagnostic line outside the file: in block definition
// tkc compile FILE
builtin.module {
