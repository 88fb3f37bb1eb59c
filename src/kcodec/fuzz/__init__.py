"""Fuzzing kcodec's decoders from the schemas (a development and test tool; needs hypothesis).

* :mod:`.strategies`: Hypothesis strategies for valid values of every entity version, from the IR;
* :mod:`.encoder`: values -> a tree of fields -> bytes equal to the generated builders', with every
  field's byte span, lengths / counts / CRCs / compressed streams computed when printed;
* :mod:`.mutators`: damage that knows field boundaries (bit flips inside a field, length and count
  lies with the CRC recomputed or not, truncation at field boundaries, over-long varints, codec id
  swaps, damaged compressed payloads, compression bombs, batches spliced across magics);
* :mod:`.targets`: every decoder an input reaches (the fast decoders, the construct reference, the
  runtime and the readers, strict, lenient and resynchronising) and the outcome of each;
* :mod:`.runner`: the loop behind ``kcodec fuzz``: values from the schemas' Hypothesis strategies,
  mutations, outcomes counted by kind, unexpected exceptions and slow inputs saved as reproducers.
"""
