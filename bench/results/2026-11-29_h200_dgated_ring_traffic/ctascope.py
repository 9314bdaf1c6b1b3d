# Patch common/hopper/ptx.cuh in place: the remote arrive with the default semantics (release at the CTA's scope), as
# CUTLASS's ClusterBarrier::arrive(cta_id) issues it, instead of release at the cluster's scope.
p = 'common/hopper/ptx.cuh'
s = open(p).read()
a = 'mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];'
assert s.count(a) == 1
open(p, 'w').write(s.replace(a, 'mbarrier.arrive.shared::cluster.b64 _, [remote];'))
