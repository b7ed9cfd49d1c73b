// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_extend_all_queries_by_n(const cattn_extend_all_queries_by_n_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
