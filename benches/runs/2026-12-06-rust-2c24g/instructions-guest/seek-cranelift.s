0000000000000020 <seek>:
      20:	push   %rbp
      21:	mov    %rsp,%rbp
      24:	mov    0x8(%rdi),%r10
      28:	mov    0x18(%r10),%r10
      2c:	add    $0x90,%r10
      33:	cmp    %rsp,%r10
      36:	ja     468 <seek>
      3c:	sub    $0x80,%rsp
      43:	mov    %rbx,0x50(%rsp)
      48:	mov    %r12,0x58(%rsp)
      4d:	mov    %r13,0x60(%rsp)
      52:	mov    %r14,0x68(%rsp)
      57:	mov    %r15,0x70(%rsp)
      5c:	mov    %rcx,0x8(%rsp)
      61:	mov    %r9,0x10(%rsp)
      66:	mov    0x38(%rdi),%r15
      6a:	mov    %rdi,(%rsp)
      6e:	mov    %edx,%ecx
      70:	lea    (%r15,%rcx,1),%r14
      74:	mov    %r14,0x48(%rsp)
      79:	mov    0x10(%r15,%rcx,1),%r13d
      7e:	test   %r13d,%r13d
      81:	mov    %r13,0x18(%rsp)
      86:	jne    a1 <seek>
      8c:	mov    0x1c(%r15,%rcx,1),%r8d
      91:	xor    %eax,%eax
      93:	mov    (%rsp),%rsi
      97:	mov    %rax,0x28(%rsp)
      9c:	jmp    333 <seek>
      a1:	mov    0x1c(%r15,%rcx,1),%eax
      a6:	mov    %rax,0x40(%rsp)
      ab:	mov    0x18(%r15,%rcx,1),%r12d
      b0:	mov    %rax,%rdx
      b3:	xor    %edx,%edx
      b5:	mov    %rdx,0x28(%rsp)
      ba:	mov    0x18(%rsp),%r14
      bf:	mov    0x28(%rsp),%rax
      c4:	mov    %rax,0x20(%rsp)
      c9:	lea    -0x1(%r14),%ecx
      cd:	mov    %r14,0x18(%rsp)
      d2:	mov    %rcx,%rax
      d5:	shl    $0x2,%eax
      d8:	lea    0x18(%rax),%r13d
      dc:	mov    0x28(%rsp),%r10
      e1:	mov    %r13,0x30(%rsp)
      e6:	lea    0x18(%r10,%rcx,4),%edx
      eb:	mov    0x28(%rsp),%rax
      f0:	mov    %rcx,0x38(%rsp)
      f5:	lea    0x4(%r13,%rax,1),%ecx
      fa:	cmp    $0xfffffffb,%edx
      fd:	ja     398 <seek>
     103:	mov    0x40(%rsp),%rax
     108:	cmp    %eax,%ecx
     10a:	ja     3a1 <seek>
     110:	lea    (%r12,%rdx,1),%eax
     114:	mov    (%r15,%rax,1),%ebx
     118:	test   %ebx,%ebx
     11a:	jne    131 <seek>
     120:	mov    0x18(%rsp),%rcx
     125:	mov    (%rsp),%rsi
     129:	mov    %r8,%r14
     12c:	jmp    2e2 <seek>
     131:	mov    0x20(%rsp),%rcx
     136:	cmp    %ecx,%ebx
     138:	jne    14f <seek>
     13e:	mov    0x18(%rsp),%rcx
     143:	mov    (%rsp),%rsi
     147:	mov    %r8,%r14
     14a:	jmp    2e2 <seek>
     14f:	lea    0x10(%rbx),%edx
     152:	cmp    $0xfffffffb,%edx
     155:	mov    %rdx,%rdi
     158:	ja     3aa <seek>
     15e:	lea    0x14(%rbx),%edx
     161:	mov    0x40(%rsp),%rax
     166:	cmp    %eax,%edx
     168:	ja     3b3 <seek>
     16e:	mov    0x40(%rsp),%rax
     173:	cmp    %eax,%edx
     175:	jae    3de <seek>
     17b:	lea    0x14(%r12,%rbx,1),%eax
     180:	movzbq (%r15,%rax,1),%rcx
     185:	lea    0x10(%r12,%rbx,1),%eax
     18a:	mov    (%r15,%rax,1),%r13d
     18e:	lea    (%rbx,%rcx,4),%esi
     191:	lea    0x18(%rbx,%rcx,4),%edx
     195:	lea    0x18(%rsi,%r13,1),%ecx
     19a:	cmp    %edx,%ecx
     19c:	jb     3c5 <seek>
     1a2:	mov    0x40(%rsp),%rdi
     1a7:	cmp    %edi,%ecx
     1a9:	ja     3c5 <seek>
     1af:	mov    %r8,%r14
     1b2:	cmp    %r14d,%r13d
     1b5:	cmovb  %r13d,%r8d
     1b9:	mov    %r8,%r9
     1bc:	and    $0xfffffff8,%r9d
     1c0:	neg    %r9d
     1c3:	lea    0x18(%r12,%rsi,1),%ecx
     1c8:	mov    %rcx,%rsi
     1cb:	mov    0x8(%rsp),%rdi
     1d0:	test   %r9d,%r9d
     1d3:	je     246 <seek>
     1d9:	mov    %edi,%eax
     1db:	mov    (%r15,%rax,1),%rdx
     1df:	mov    %esi,%eax
     1e1:	mov    (%r15,%rax,1),%r10
     1e5:	add    $0x8,%r9d
     1ec:	add    $0x8,%edi
     1f2:	add    $0x8,%esi
     1f8:	cmp    %rdx,%r10
     1fb:	je     1d0 <seek>
     201:	mov    %rdx,%rsi
     204:	xor    %r10,%rsi
     207:	tzcnt  %rsi,%rcx
     20c:	and    $0x38,%rcx
     210:	shrx   %rcx,%r10,%rsi
     215:	and    $0xff,%esi
     21b:	shrx   %rcx,%rdx,%rcx
     220:	and    $0xff,%ecx
     226:	cmp    %ecx,%esi
     228:	jb     23c <seek>
     22e:	mov    0x18(%rsp),%rcx
     233:	mov    (%rsp),%rsi
     237:	jmp    2e2 <seek>
     23c:	mov    0x38(%rsp),%rax
     241:	jmp    29e <seek>
     246:	mov    %r8,%rsi
     249:	and    $0x7ffffff8,%esi
     24f:	lea    (%rcx,%rsi,1),%edx
     252:	mov    0x8(%rsp),%rax
     257:	lea    (%rax,%rsi,1),%ecx
     25a:	and    $0x7,%r8d
     25e:	mov    (%rsp),%rsi
     262:	mov    (%rsp),%rdi
     266:	call   11760 <wasm[0]::function[159]::memcmp>
     26b:	mov    %rax,%rsi
     26e:	shr    $0x1f,%esi
     271:	cmp    %r14d,%r13d
     274:	setb   %dil
     278:	test   %eax,%eax
     27a:	cmovne %esi,%edi
     27d:	movzbl %dil,%r8d
     281:	cmp    $0x1,%r8d
     285:	je     299 <seek>
     28b:	mov    0x18(%rsp),%rcx
     290:	mov    (%rsp),%rsi
     294:	jmp    2e2 <seek>
     299:	mov    0x38(%rsp),%rax
     29e:	lea    0x18(%rbx,%rax,4),%edx
     2a2:	mov    0x30(%rsp),%r13
     2a7:	mov    %rax,0x38(%rsp)
     2ac:	lea    0x4(%r13,%rbx,1),%ecx
     2b1:	cmp    $0xfffffffb,%edx
     2b4:	ja     3bc <seek>
     2ba:	mov    0x40(%rsp),%rax
     2bf:	cmp    %eax,%ecx
     2c1:	ja     2d9 <seek>
     2c7:	mov    %r14,%r8
     2ca:	mov    %rbx,0x28(%rsp)
     2cf:	mov    %r13,0x30(%rsp)
     2d4:	jmp    110 <seek>
     2d9:	mov    (%rsp),%rsi
     2dd:	jmp    453 <seek>
     2e2:	cmp    $0xd,%ecx
     2e5:	jae    38e <seek>
     2eb:	mov    0x38(%rsp),%rdx
     2f0:	mov    0x10(%rsp),%r9
     2f5:	lea    (%r9,%rdx,4),%eax
     2f9:	mov    0x28(%rsp),%rdi
     2fe:	mov    %edi,(%r15,%rax,1)
     302:	cmp    $0x1,%ecx
     305:	jne    31a <seek>
     30b:	mov    0x28(%rsp),%rax
     310:	mov    0x40(%rsp),%r8
     315:	jmp    333 <seek>
     31a:	mov    %rbx,0x20(%rsp)
     31f:	mov    %r9,0x10(%rsp)
     324:	mov    %rsi,(%rsp)
     328:	mov    %r14,%r8
     32b:	mov    %rdx,%r14
     32e:	jmp    c9 <seek>
     333:	add    $0x18,%eax
     339:	cmp    $0xfffffffb,%eax
     33c:	ja     412 <seek>
     342:	mov    0x28(%rsp),%rdi
     347:	lea    0x1c(%rdi),%eax
     34a:	cmp    %r8d,%eax
     34d:	ja     41c <seek>
     353:	mov    0x28(%rsp),%r10
     358:	lea    0x18(%r10),%eax
     35c:	mov    0x48(%rsp),%r14
     361:	add    0x18(%r14),%eax
     365:	mov    (%r15,%rax,1),%eax
     369:	mov    0x50(%rsp),%rbx
     36e:	mov    0x58(%rsp),%r12
     373:	mov    0x60(%rsp),%r13
     378:	mov    0x68(%rsp),%r14
     37d:	mov    0x70(%rsp),%r15
     382:	add    $0x80,%rsp
     389:	mov    %rbp,%rsp
     38c:	pop    %rbp
     38d:	ret
     38e:	mov    0x38(%rsp),%rdx
     393:	jmp    43e <seek>
     398:	mov    (%rsp),%rsi
     39c:	jmp    453 <seek>
     3a1:	mov    (%rsp),%rsi
     3a5:	jmp    453 <seek>
     3aa:	mov    (%rsp),%rsi
     3ae:	jmp    3f7 <seek>
     3b3:	mov    (%rsp),%rsi
     3b7:	jmp    3f7 <seek>
     3bc:	mov    (%rsp),%rsi
     3c0:	jmp    453 <seek>
     3c5:	mov    $0x100764,%r9d
     3cb:	mov    (%rsp),%rsi
     3cf:	mov    0x40(%rsp),%r8
     3d4:	mov    %rsi,%rdi
     3d7:	call   eb00 <wasm[0]::function[135]::_RNvNtNtCsgXGp5Oqx2Ny_4core5slice5index16slice_index_fail>
     3dc:	ud2
     3de:	mov    (%rsp),%rsi
     3e2:	mov    $0x100754,%r8d
     3e8:	mov    0x40(%rsp),%rcx
     3ed:	mov    %rsi,%rdi
     3f0:	call   f380 <wasm[0]::function[139]::_RNvNtCsgXGp5Oqx2Ny_4core9panicking18panic_bounds_check>
     3f5:	ud2
     3f7:	lea    0x14(%rbx),%ecx
     3fa:	mov    $0x100784,%r9d
     400:	mov    %rdi,%rdx
     403:	mov    0x40(%rsp),%r8
     408:	mov    %rsi,%rdi
     40b:	call   eb00 <wasm[0]::function[135]::_RNvNtNtCsgXGp5Oqx2Ny_4core5slice5index16slice_index_fail>
     410:	ud2
     412:	mov    0x28(%rsp),%r15
     417:	jmp    421 <seek>
     41c:	mov    0x28(%rsp),%r15
     421:	lea    0x18(%r15),%edx
     425:	mov    0x28(%rsp),%r15
     42a:	lea    0x1c(%r15),%ecx
     42e:	mov    $0x100784,%r9d
     434:	mov    %rsi,%rdi
     437:	call   eb00 <wasm[0]::function[135]::_RNvNtNtCsgXGp5Oqx2Ny_4core5slice5index16slice_index_fail>
     43c:	ud2
     43e:	mov    $0xc,%ecx
     443:	mov    $0x100774,%r8d
     449:	mov    %rsi,%rdi
     44c:	call   f380 <wasm[0]::function[139]::_RNvNtCsgXGp5Oqx2Ny_4core9panicking18panic_bounds_check>
     451:	ud2
     453:	mov    $0x100784,%r9d
     459:	mov    0x40(%rsp),%r8
     45e:	mov    %rsi,%rdi
     461:	call   eb00 <wasm[0]::function[135]::_RNvNtNtCsgXGp5Oqx2Ny_4core5slice5index16slice_index_fail>
     466:	ud2
     468:	ud2
