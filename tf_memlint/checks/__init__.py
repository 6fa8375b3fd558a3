"""The rule catalogue, one module per rule (``tfm404_predict_in_loop.py``): its visitor, its reach
path into called functions where it has one, and its exemptions. Importing this package registers
every rule."""

from tf_memlint.checks import tfm101_python_loop_in_tf_function  # noqa: F401
from tf_memlint.checks import tfm102_tensor_list_append_in_traced_loop  # noqa: F401
from tf_memlint.checks import tfm103_python_state_in_traced_function  # noqa: F401
from tf_memlint.checks import tfm104_retrace_on_python_value  # noqa: F401
from tf_memlint.checks import tfm105_tf_function_created_in_loop  # noqa: F401
from tf_memlint.checks import tfm106_large_constant_in_graph  # noqa: F401
from tf_memlint.checks import tfm107_retrace_on_changing_shape  # noqa: F401
from tf_memlint.checks import tfm110_python_scalar_parameter  # noqa: F401
from tf_memlint.checks import tfm201_unclosed_session  # noqa: F401
from tf_memlint.checks import tfm202_graph_growth_in_session_loop  # noqa: F401
from tf_memlint.checks import tfm301_large_intermediate_in_map_body  # noqa: F401
from tf_memlint.checks import tfm302_shuffle_buffer_holds_decoded_dataset  # noqa: F401
from tf_memlint.checks import tfm303_dataset_cached_in_memory  # noqa: F401
from tf_memlint.checks import tfm304_dataset_built_per_call  # noqa: F401
from tf_memlint.checks import tfm401_persistent_tape_not_released  # noqa: F401
from tf_memlint.checks import tfm402_tensor_history_in_training_loop  # noqa: F401
from tf_memlint.checks import tfm403_model_in_loop_without_clear_session  # noqa: F401
from tf_memlint.checks import tfm404_predict_in_loop  # noqa: F401
from tf_memlint.checks import tfm405_fit_per_step  # noqa: F401
from tf_memlint.checks import tfm406_compile_in_loop  # noqa: F401
from tf_memlint.checks import tfm407_whole_split_in_one_batch  # noqa: F401
from tf_memlint.checks import tfm408_model_loaded_per_call  # noqa: F401
from tf_memlint.checks import tfm409_summary_writer_per_call  # noqa: F401
from tf_memlint.checks import tfm501_gpu_shared_by_processes_without_memory_growth  # noqa: F401
