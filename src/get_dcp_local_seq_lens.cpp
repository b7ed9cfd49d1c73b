// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_get_dcp_local_seq_lens(const cattn_dcp_local_seq_lens_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
