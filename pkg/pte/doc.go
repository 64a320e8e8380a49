// Package pte reads ExecuTorch program files (.pte) natively, so that the pipeline can say
// what an export produced without Python: the methods, the backend each runs on, where the
// delegate blobs and segments lie, and the values of the metadata methods the runtime reads
// (get_max_seq_len, get_eos_ids, ...).
//
// Open reads only the header and the Program flatbuffer through an io.ReaderAt, never the
// tensor data, so a multi-gigabyte file costs the same as a small one. Every offset is
// bounds-checked and decoding is bounded by the program's size: malformed input is an
// error, never a panic or a huge allocation. The format is ExecuTorch's schema/program.fbs
// (file identifier ET12) with the optional "eh00" extended header.
package pte
