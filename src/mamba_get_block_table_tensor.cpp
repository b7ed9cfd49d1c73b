// Utility stub: replaced by the real implementation.
#include "common/error.h"
extern "C" {
CATTN_API cattn_status_t cattn_mamba_get_block_table_tensor(const cattn_mamba_block_table_args_t*) { return CATTN_NOT_IMPLEMENTED; }
}
