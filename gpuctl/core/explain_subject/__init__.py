"""`gpuctl explain pod/NAME | node/NAME`: gather the evidence a person would read about one pod or
node (events, container statuses, the scheduler's message, the node's state, the GPU plugin and
operand pods there and their logs; with an inventory, the node's host over SSH) and name the one
cause the diagnosis table puts first, with the evidence lines that led there."""
