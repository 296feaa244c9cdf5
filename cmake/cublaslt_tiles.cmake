# cublaslt_tiles.cmake — the tile table of cuBLASLt's header as data: every CUBLASLT_MATMUL_TILE_<rows>x<cols> = <id>
# of cublasLt.h becomes a row {id, rows, cols} of generated/private/cublaslt_tiles.inc, which src/choices/cublaslt.cpp reads
# (the configuration search's wave model needs each tile's extent; cuBLASLt's API gives only the id). Run at configure
# time (CMakeLists.txt; the header is a configure dependency): cmake -DHEADER=<cublasLt.h> -DOUTPUT=<file> -P
# cublaslt_tiles.cmake.
file(READ "${HEADER}" text)
string(REGEX MATCHALL "CUBLASLT_MATMUL_TILE_[0-9]+x[0-9]+ = [0-9]+" entries "${text}")
set(rows_out "// Generated from cublasLt.h by cmake/cublaslt_tiles.cmake: {tile id, rows, columns}.\n")
list(LENGTH entries n)
foreach(e IN LISTS entries)
  string(REGEX REPLACE "CUBLASLT_MATMUL_TILE_([0-9]+)x([0-9]+) = ([0-9]+)" "{\\3, \\1, \\2}," row "${e}")
  string(APPEND rows_out "${row}\n")
endforeach()
if(n EQUAL 0)
  message(FATAL_ERROR "cublaslt_tiles.cmake: no CUBLASLT_MATMUL_TILE_ entries in ${HEADER}")
endif()
file(WRITE "${OUTPUT}.tmp" "${rows_out}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
