/*
 * passes.c: passes over a built graph. There is one: dead code elimination.
 *
 * Folding leaves constants behind (the operands it folded), type promotion
 * may make casts that folding then replaced, and bindings need not be used:
 * ir_dce keeps only what an output needs. It walks the node array backwards
 * once (arguments have smaller ids than their users, so a node's liveness is
 * final when the walk reaches it): no recursion, whatever the graph's depth.
 * The survivors are renumbered in their old order, so the array stays a
 * topological order and the printed IR stays stable.
 *
 * Every input keeps its OP_INPUT node, used or not: Graph.inputs lists each
 * declared input with a valid node (the API and the interpreter still bind
 * and check it), and an unused input is simply a node nothing reads.
 */
#include "ir/ir.h"

void ir_dce(Graph *g)
{
	if (g->n == 0)
		return;
	uint8_t *live = ARENA_ARRAY(g->arena, uint8_t, g->n);
	NodeId *renum = ARENA_ARRAY(g->arena, NodeId, g->n);
	for (int i = 0; i < g->noutputs; i++)
		live[g->outputs[i].node] = 1;
	for (int i = 0; i < g->ninputs; i++)
		live[g->inputs[i].node] = 1;
	for (NodeId id = g->n - 1; id >= 0; id--) {
		if (!live[id])
			continue;
		const Node *n = &g->nodes[id];
		for (int k = 0; k < ir_ops[n->op].arity; k++)
			live[n->args[k]] = 1;
	}
	int m = 0;
	for (NodeId id = 0; id < g->n; id++) {
		renum[id] = -1;
		if (!live[id])
			continue;
		Node n = g->nodes[id];
		for (int k = 0; k < ir_ops[n.op].arity; k++)
			n.args[k] = renum[n.args[k]];
		renum[id] = m;
		g->nodes[m++] = n;
	}
	g->n = m;
	for (int i = 0; i < g->noutputs; i++)
		g->outputs[i].node = renum[g->outputs[i].node];
	for (int i = 0; i < g->ninputs; i++)
		g->inputs[i].node = renum[g->inputs[i].node];
}
